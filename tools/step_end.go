package tools

import (
	"context"
	"sync"
)

// The model asks for several tool calls in one step; the agent runs them
// one after another. An effect that others may act on at once — waking a
// teammate for a task just created — is better published when the whole
// step is done: a lead that creates two tasks in one step must not have
// the first finished, and "every task is closed" reported, before the
// second exists.

type stepEndKey struct{}

type stepEnd struct {
	mu  sync.Mutex
	fns []func(context.Context)
}

// WithStepEnd returns ctx for running the tool calls of one step, and the
// function that runs the effects they deferred with AtStepEnd, in order.
// Call it once every call of the step has returned.
func WithStepEnd(ctx context.Context) (context.Context, func(context.Context)) {
	s := &stepEnd{}
	return context.WithValue(ctx, stepEndKey{}, s), func(ctx context.Context) {
		s.mu.Lock()
		fns := s.fns
		s.fns = nil
		s.mu.Unlock()
		for _, f := range fns {
			f(ctx)
		}
	}
}

// AtStepEnd runs f when the step ctx belongs to ends (see WithStepEnd), or
// at once when ctx belongs to no step.
func AtStepEnd(ctx context.Context, f func(context.Context)) {
	s, ok := ctx.Value(stepEndKey{}).(*stepEnd)
	if !ok {
		f(ctx)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fns = append(s.fns, f)
}
