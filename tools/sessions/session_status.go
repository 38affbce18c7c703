package sessions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// SessionStats describes a stored session.
type SessionStats struct {
	Messages  int
	Started   time.Time
	LastEvent time.Time
}

// SessionStatsSource looks up session statistics (Postgres implements it).
type SessionStatsSource interface {
	SessionStats(ctx context.Context, session string) (SessionStats, error)
}

// SessionStatus tells the model about the conversation it is in: where it
// is, with whom, and how long it has been going.
type SessionStatus struct {
	Source SessionStatsSource
}

// Name implements Tool.
func (SessionStatus) Name() string { return "session_status" }

// Description implements Tool.
func (SessionStatus) Description() string {
	return "Describe the current conversation: platform, chat, whether it is a direct chat, the session key and how many messages it holds."
}

// Parameters implements Tool.
func (SessionStatus) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (SessionStatus) SideEffect() tools.SideEffect { return tools.SideEffectNone }

// Execute implements Tool.
func (s SessionStatus) Execute(ctx context.Context, _ json.RawMessage) tools.Result {
	c, ok := tools.CallFrom(ctx)
	if !ok {
		return tools.ErrorResult("no session in this context")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agent: %s\nplatform: %s\nchat: %s\n", c.Agent, c.Channel, c.ChatID)
	if c.ThreadID != "" {
		fmt.Fprintf(&b, "thread: %s\n", c.ThreadID)
	}
	fmt.Fprintf(&b, "peer kind: %s\nuser: %s\nsession: %s\n", c.PeerKind, c.UserID, c.Session)
	if s.Source != nil {
		st, err := s.Source.SessionStats(ctx, c.Session)
		if err != nil {
			return tools.ErrorResult("session statistics are unavailable right now")
		}
		fmt.Fprintf(&b, "messages: %d\nstarted: %s\nlast activity: %s\n",
			st.Messages, st.Started.UTC().Format(time.RFC3339), st.LastEvent.UTC().Format(time.RFC3339))
	}
	return tools.Result{ForLLM: b.String()}
}
