package tools

import "context"

// Call carries the per-call values a tool may need: where the conversation
// is and who is in it. The registry puts it into the context of every call so
// tool instances stay stateless and shareable across goroutines.
type Call struct {
	Channel  string // platform, e.g. "telegram"
	ChatID   string
	ThreadID string
	PeerKind string // "direct" or "group"
	UserID   string // platform:user_id of the person who started the run
	Session  string // session key; also the rate-limit and sandbox key
	Agent    string // agent name
	// ToolCallID is the model's id of this call; with Session it names the
	// call uniquely, so a call resumed after a restart is recognised.
	ToolCallID string
}

type callKey struct{}

// WithCall returns ctx carrying c.
func WithCall(ctx context.Context, c Call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

// CallFrom returns the Call stored in ctx, if any.
func CallFrom(ctx context.Context) (Call, bool) {
	c, ok := ctx.Value(callKey{}).(Call)
	return c, ok
}
