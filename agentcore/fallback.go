package agentcore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"syscall"
	"time"
)

// FallbackOptions tunes WithFallbacks. Zero fields take their defaults.
type FallbackOptions struct {
	// Logger receives a warning per call a fallback model answered, and a
	// note when the first model answers again (default: discarded).
	Logger *slog.Logger
	// Now is the clock of the status (default time.Now).
	Now func() time.Time
}

// Fallbacks is a Provider that asks other models on the same server when
// the model of a request fails; see WithFallbacks.
type Fallbacks struct {
	p      Provider
	models []string
	log    *slog.Logger
	now    func() time.Time

	mu    sync.Mutex
	state FallbackState
}

// FallbackState is what the last calls of a Fallbacks saw, for /status.
type FallbackState struct {
	// Failed is the model asked for that failed; "" until one has.
	Failed string
	// Reason says how it failed, in a few words ("HTTP 500", "timeout").
	Reason string
	// Answered is the model that answered instead; "" when every model failed.
	Answered string
	// Since is when the models began failing this way.
	Since time.Time
	// Active is true while it goes on: false once Failed answered again.
	Active bool
	// Recovered is when Failed answered again (Active false).
	Recovered time.Time
}

// WithFallbacks wraps p, itself usually WithRetry's, so that a call whose
// model fails after its retries in a way another model may not — a 5xx, a
// 429, a timeout, a refused or broken connection: ProviderError.Retryable
// without the 4xx answers other than 429 — is made again with the next of
// models, in order, on the same provider. A request the model refused as
// invalid (another 4xx) is never sent to a fallback: its error is the
// caller's. A fallback that fails too, or does not know its model, passes
// the call on to the next one.
//
// Streaming: a call that already passed text to onText and then failed is
// not handed to a fallback: people have been reading the failed model's
// words, and another model's answer would replace them with a different
// one. Its error is returned as it is. (Server errors and refused
// connections come before the first words.)
func WithFallbacks(p Provider, models []string, opts FallbackOptions) *Fallbacks {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Fallbacks{p: p, models: append([]string(nil), models...), log: opts.Logger, now: opts.Now}
}

// Name returns the wrapped provider's name.
func (f *Fallbacks) Name() string { return f.p.Name() }

// Models returns the fallback models, in the order they are tried.
func (f *Fallbacks) Models() []string { return append([]string(nil), f.models...) }

// State returns what the last calls saw.
func (f *Fallbacks) State() FallbackState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.state
}

// Chat asks req.Model, then each fallback model other than it in order, as
// WithFallbacks describes. The Response's Model is the model that answered.
// When no model answers, the error names each model tried and how it
// failed, and wraps the last model's error.
func (f *Fallbacks) Chat(ctx context.Context, req Request, onText func(soFar string)) (Response, error) {
	chain := f.chain(req.Model)
	var failed []modelFailure
	for i, model := range chain {
		try := req
		try.Model = model
		streamed := false
		delta := onText
		if onText != nil {
			delta = func(text string) {
				streamed = streamed || text != ""
				onText(text)
			}
		}
		resp, err := f.p.Chat(ctx, try, delta)
		if err == nil {
			resp.Model = model
			f.answered(ctx, req.Model, model, failed)
			return resp, nil
		}
		err = withModel(err, model)
		failed = append(failed, modelFailure{model: model, err: err})
		if streamed || ctx.Err() != nil || i == len(chain)-1 || !f.passesOn(err, i == 0) {
			break
		}
	}
	return Response{}, f.fail(req.Model, failed)
}

// chain is the models a call for model tries: model, then the fallbacks
// that are not it.
func (f *Fallbacks) chain(model string) []string {
	out := []string{model}
	for _, m := range f.models {
		if m != model {
			out = append(out, m)
		}
	}
	return out
}

// passesOn reports whether a call that failed with err goes to the next
// model. The first model's failure must be one another model may not
// have; a fallback's may also be that the server does not know it (a
// wrong entry in llm.fallbacks must not hide the next one).
func (f *Fallbacks) passesOn(err error, first bool) bool {
	var pe *ProviderError
	if !errors.As(err, &pe) {
		return false
	}
	return modelFailed(pe) || !first && pe.UnknownModel()
}

// modelFailed reports whether pe says the model failed rather than that
// it refused the request: a retryable failure (ProviderError.Retryable)
// that is not a 4xx other than 429. 408 and 409 are retried but not
// handed on: a 4xx is the server's word on the request, which another
// model on it would get too.
func modelFailed(pe *ProviderError) bool {
	if !pe.Retryable() {
		return false
	}
	return pe.Status == 0 || pe.Status == 429 || pe.Status >= 500
}

// modelFailure is one model's failed call.
type modelFailure struct {
	model string
	err   error
}

// answered records that model answered a call for asked, after the
// models in failed failed: one warning per call a fallback answered.
func (f *Fallbacks) answered(ctx context.Context, asked, model string, failed []modelFailure) {
	now := f.now()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(failed) == 0 {
		if f.state.Active && f.state.Failed == model {
			f.state.Active, f.state.Recovered = false, now
			f.log.InfoContext(ctx, "llm model answers again", "model", model, "failing_since", f.state.Since)
		}
		return
	}
	first := failed[0]
	reason := failureReason(first.err)
	f.setActive(asked, reason, model, now)
	f.log.WarnContext(ctx, "llm model failed; a fallback model answered",
		"model", first.model, "reason", reason, "answered_by", model,
		"failed", failedNames(failed), "err", first.err)
}

// fail records that no model answered a call for asked and returns the
// error saying so: the model's own error when no fallback was asked.
func (f *Fallbacks) fail(asked string, failed []modelFailure) error {
	last := failed[len(failed)-1].err
	if len(failed) == 1 {
		return last
	}
	f.mu.Lock()
	f.setActive(asked, failureReason(failed[0].err), "", f.now())
	f.mu.Unlock()
	parts := make([]string, len(failed))
	for i, m := range failed {
		parts[i] = fmt.Sprintf("model %s: %v", m.model, m.err)
	}
	return &FallbackError{Models: failedNames(failed), Err: last, text: strings.Join(parts, "; ")}
}

// setActive records a fallback going on; Since stays when it goes on as
// it began (the same model failing, the same one answering). f.mu is held.
func (f *Fallbacks) setActive(asked, reason, answered string, now time.Time) {
	s := f.state
	if !s.Active || s.Failed != asked || s.Answered != answered {
		s.Since = now
	}
	f.state = FallbackState{Failed: asked, Reason: reason, Answered: answered, Since: s.Since, Active: true}
}

// FallbackError is a call that no model answered: the model asked for
// failed, and so did each fallback tried after it.
type FallbackError struct {
	// Models are the models tried, in order.
	Models []string
	// Err is the last model's error.
	Err  error
	text string
}

func (e *FallbackError) Error() string {
	return "no model answered: " + e.text
}

// Unwrap returns the last model's error, so that callers telling the
// person what went wrong see what the last model said.
func (e *FallbackError) Unwrap() error { return e.Err }

// failedNames lists the models of failed.
func failedNames(failed []modelFailure) []string {
	out := make([]string, len(failed))
	for i, m := range failed {
		out[i] = m.model
	}
	return out
}

// failureReason says in a few words how a model failed: its HTTP status,
// "timeout", "connection refused", or "no answer".
func failureReason(err error) string {
	var pe *ProviderError
	switch {
	case errors.As(err, &pe) && pe.Status != 0:
		return fmt.Sprintf("HTTP %d", pe.Status)
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, syscall.ECONNRESET):
		return "connection broken"
	}
	return "no answer"
}
