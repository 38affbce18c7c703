package agentcore

import (
	"fmt"
	"strings"
	"time"
)

// StatusLine says, for /status, how the models of f are doing: a fallback
// answering for a failing model, every model failing, the model answering
// again after the last fallback, or — no fallback yet — model (the one
// the agent asks for) with its fallbacks.
func (f *Fallbacks) StatusLine(model string) string {
	s := f.State()
	now := f.now()
	switch {
	case s.Failed == "":
		return fmt.Sprintf("✅ model %s (fallbacks: %s, not needed so far)", model, strings.Join(f.models, ", "))
	case s.Active && s.Answered != "":
		return fmt.Sprintf("⚠️ model %s failing (%s); answering with %s since %s",
			s.Failed, s.Reason, s.Answered, clock(s.Since, now))
	case s.Active:
		return fmt.Sprintf("❌ model %s failing (%s) and its fallbacks too since %s",
			s.Failed, s.Reason, clock(s.Since, now))
	case s.Answered != "":
		return fmt.Sprintf("✅ model %s answering again since %s (last fallback: %s, from %s, after %s)",
			s.Failed, clock(s.Recovered, now), s.Answered, clock(s.Since, now), s.Reason)
	}
	return fmt.Sprintf("✅ model %s answering again since %s (it and its fallbacks failed from %s, %s)",
		s.Failed, clock(s.Recovered, now), clock(s.Since, now), s.Reason)
}

// clock is t in UTC as a time of day, with the date when t is not on
// now's day.
func clock(t, now time.Time) string {
	t, now = t.UTC(), now.UTC()
	if t.Format(time.DateOnly) != now.Format(time.DateOnly) {
		return t.Format("2006-01-02 15:04:05 UTC")
	}
	return t.Format("15:04:05 UTC")
}
