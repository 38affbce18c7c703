package bot

import (
	"context"
	"log/slog"
)

// ToolRate limits tool calls per session (tools.RateLimiter) through the
// shared Limiter. Like the message rate limits it lets calls through while
// the limiter is unavailable (Redis down): an outage must not stop agents.
type ToolRate struct {
	Limiter Limiter
	Rate    Rate
	// Logger receives a debug line per call let through unchecked; nil
	// discards them.
	Logger *slog.Logger
}

// Allow takes one tool call from session's bucket.
func (t ToolRate) Allow(ctx context.Context, session string) (bool, error) {
	ok, _, err := t.Limiter.Allow(ctx, "rl:tool:"+session, t.Rate)
	if err != nil {
		if t.Logger != nil {
			t.Logger.Debug("tool rate limiter unavailable; letting the call through", "session", session, "err", err)
		}
		return true, nil
	}
	return ok, nil
}
