package agentcore

import (
	"context"
	"errors"

	"github.com/switchboard-chat/switchboard/tools"
)

// Meter accounts an agent's model calls: budgets are checked before each
// call and its usage is recorded after it (bot/usage implements it). The
// run loop asks it for every model call, the first of a turn and each one
// after a tool step alike, so no call escapes a budget.
type Meter interface {
	// Admit is asked before the model is called. A *RefusedError keeps the
	// model from being called: its Reply is stored as the run's answer
	// and the run ends. Any other error ends the run with that error.
	Admit(ctx context.Context, c MeteredCall) error
	// Record is told the usage of a call that answered. It must keep the
	// record durable whatever happens to ctx (a run stopped right after
	// its model call still spent the tokens).
	Record(ctx context.Context, c MeteredCall, u Usage)
}

// MeteredCall says whose model call it is: the run's session and call
// (who started it, in which chat, for which agent) and the model asked.
type MeteredCall struct {
	Session string
	Call    tools.Call
	// Model is the model the request asks for; in Record, the one that
	// answered (a fallback's, when llm.fallbacks took over).
	Model string
}

// RefusedError is a Meter's refusal of a model call: Reply is what the
// person is told instead of an answer (which budget, its use, when it
// resets).
type RefusedError struct {
	Reply string
}

func (e *RefusedError) Error() string { return "model call refused: " + e.Reply }

// admit asks the agent's Meter, if any, whether the run may call model.
// It returns the refusal, or the error that ends the run.
func (r *runLoop) admit(ctx context.Context, model string) (*RefusedError, error) {
	if r.a.Meter == nil {
		return nil, nil
	}
	err := r.a.Meter.Admit(ctx, MeteredCall{Session: r.in.Session, Call: r.in.Call, Model: model})
	var refused *RefusedError
	if errors.As(err, &refused) {
		return refused, nil
	}
	return nil, err
}

// record tells the agent's Meter, if any, what a call used.
func (r *runLoop) record(ctx context.Context, model string, u Usage) {
	if r.a.Meter != nil {
		r.a.Meter.Record(ctx, MeteredCall{Session: r.in.Session, Call: r.in.Call, Model: model}, u)
	}
}

// Meters is several Meters asked in order: a call is admitted when each
// admits it, and each is told its usage (the usage record first, so a
// running total rebuilt from it counts the call once).
type Meters []Meter

// Admit implements Meter: the first refusal or error wins.
func (ms Meters) Admit(ctx context.Context, c MeteredCall) error {
	for _, m := range ms {
		if err := m.Admit(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

// Record implements Meter.
func (ms Meters) Record(ctx context.Context, c MeteredCall, u Usage) {
	for _, m := range ms {
		m.Record(ctx, c, u)
	}
}
