package bot

import "context"

// Turns makes background passes that wake on the shared beat (UntilBeat)
// run one after another instead of all at once: the recovery pass, the
// outbox's safety poll, the scheduler's check and the team inboxes. Each
// pass is a query or two. Run at once, each would take a pooled database
// connection, and the pool keeps idle connections, each with a backend
// process on the server; taking turns, an idle daemon needs one.
//
// Work that must not wait behind another pass does not take turns: the
// heartbeat (Liveness), leadership checks (Leader) and anything a message
// does.
type Turns struct {
	turn chan struct{} // holds a token while a pass runs
}

// NewTurns returns a Turns for passes to share.
func NewTurns() *Turns { return &Turns{turn: make(chan struct{}, 1)} }

// Run calls pass once no other pass of t is running, and returns what pass
// returns. When ctx ends first it returns ctx's error without calling pass.
// On a nil Turns it calls pass at once.
func (t *Turns) Run(ctx context.Context, pass func(context.Context) error) error {
	if t == nil {
		return pass(ctx)
	}
	select {
	case t.turn <- struct{}{}:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { <-t.turn }()
	return pass(ctx)
}

// pass returns pass run in its turn (Run), for a loop that calls it.
func (t *Turns) pass(pass func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error { return t.Run(ctx, pass) }
}
