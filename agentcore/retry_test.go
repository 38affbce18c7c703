package agentcore

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"testing"
	"time"
)

// retryScripted fails with errs in order, then succeeds.
type retryScripted struct {
	errs  []error
	calls int
}

func (p *retryScripted) Name() string { return "scripted" }

func (p *retryScripted) Chat(context.Context, Request, func(string)) (Response, error) {
	p.calls++
	if p.calls <= len(p.errs) {
		return Response{}, p.errs[p.calls-1]
	}
	return Response{Content: "ok"}, nil
}

// retrySleepRecorder records waits without waiting.
type retrySleepRecorder struct{ slept []time.Duration }

func (r *retrySleepRecorder) sleep(_ context.Context, d time.Duration) error {
	r.slept = append(r.slept, d)
	return nil
}

func retryQuiet(p Provider, s *retrySleepRecorder, opts RetryOptions) Provider {
	opts.Sleep = s.sleep
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	return WithRetry(p, opts)
}

func retryStatusErr(status int) error {
	return &ProviderError{Provider: "scripted", Status: status, Err: errors.New(http.StatusText(status))}
}

func TestRetryRecoversAfterRateLimits(t *testing.T) {
	p := &retryScripted{errs: []error{retryStatusErr(429), retryStatusErr(429)}}
	s := &retrySleepRecorder{}
	resp, err := retryQuiet(p, s, RetryOptions{}).Chat(context.Background(), Request{}, nil)
	if err != nil || resp.Content != "ok" {
		t.Fatalf("Chat = %+v, %v; want ok", resp, err)
	}
	if p.calls != 3 || len(s.slept) != 2 {
		t.Fatalf("calls = %d, sleeps = %d; want 3 and 2", p.calls, len(s.slept))
	}
	// default Base 500ms: first wait in [250ms,500ms], second in [500ms,1s]
	if s.slept[0] < 250*time.Millisecond || s.slept[0] > 500*time.Millisecond ||
		s.slept[1] < 500*time.Millisecond || s.slept[1] > time.Second {
		t.Fatalf("slept %v, want exponential backoff from 500ms", s.slept)
	}
}

func TestRetryDoesNotRetryClientErrors(t *testing.T) {
	p := &retryScripted{errs: []error{retryStatusErr(400)}}
	s := &retrySleepRecorder{}
	_, err := retryQuiet(p, s, RetryOptions{}).Chat(context.Background(), Request{}, nil)
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 400 {
		t.Fatalf("err = %v, want the 400", err)
	}
	if p.calls != 1 || len(s.slept) != 0 {
		t.Fatalf("calls = %d, sleeps = %d; want 1 and 0", p.calls, len(s.slept))
	}
}

func TestRetryDoesNotRetryPlainErrors(t *testing.T) {
	p := &retryScripted{errs: []error{errors.New("bad schema")}}
	_, err := retryQuiet(p, &retrySleepRecorder{}, RetryOptions{}).Chat(context.Background(), Request{}, nil)
	if err == nil || p.calls != 1 {
		t.Fatalf("err = %v after %d calls, want the error after 1", err, p.calls)
	}
}

func TestRetryGivesUpAfterAttempts(t *testing.T) {
	errs := make([]error, 10)
	for i := range errs {
		errs[i] = retryStatusErr(500 + i)
	}
	p := &retryScripted{errs: errs}
	s := &retrySleepRecorder{}
	_, err := retryQuiet(p, s, RetryOptions{Attempts: 3, Base: time.Second, Max: 3 * time.Second}).
		Chat(context.Background(), Request{}, nil)
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Status != 502 {
		t.Fatalf("err = %v, want the last (third) error, HTTP 502", err)
	}
	if p.calls != 3 || len(s.slept) != 2 {
		t.Fatalf("calls = %d, sleeps = %d; want 3 and 2", p.calls, len(s.slept))
	}
	for _, d := range s.slept {
		if d > 3*time.Second {
			t.Fatalf("slept %v, more than Max", d)
		}
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	p := &retryScripted{errs: []error{
		&ProviderError{Provider: "x", Status: 429, RetryAfter: 7 * time.Second, Err: errors.New("slow down")},
		&ProviderError{Provider: "x", Status: 429, RetryAfter: time.Hour, Err: errors.New("slow down")},
	}}
	s := &retrySleepRecorder{}
	_, err := retryQuiet(p, s, RetryOptions{Max: 20 * time.Second}).Chat(context.Background(), Request{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.slept) != 2 || s.slept[0] != 7*time.Second || s.slept[1] != 20*time.Second {
		t.Fatalf("slept %v, want [7s 20s] (hint, then hint capped by Max)", s.slept)
	}
}

func TestRetryStopsWhenContextEnds(t *testing.T) {
	p := &retryScripted{errs: []error{retryStatusErr(503), retryStatusErr(503)}}
	ctx, cancel := context.WithCancel(context.Background())
	r := WithRetry(p, RetryOptions{
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
		Sleep: func(ctx context.Context, _ time.Duration) error {
			cancel()
			return ctx.Err()
		},
	})
	_, err := r.Chat(ctx, Request{}, nil)
	var pe *ProviderError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &pe) || pe.Status != 503 {
		t.Fatalf("err = %v, want the 503 and context.Canceled", err)
	}
	if p.calls != 1 {
		t.Fatalf("calls = %d, want 1", p.calls)
	}
}

func TestRetryDefaultSleepHonoursContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := sleepCtx(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("sleepCtx = %v, want context.Canceled", err)
	}
}

func TestRetryName(t *testing.T) {
	if got := WithRetry(&retryScripted{}, RetryOptions{}).Name(); got != "scripted" {
		t.Fatalf("Name = %q", got)
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name string
		h    http.Header
		want time.Duration
	}{
		{"none", http.Header{}, 0},
		{"seconds", http.Header{"Retry-After": {"3"}}, 3 * time.Second},
		{"ms wins", http.Header{"Retry-After": {"3"}, "Retry-After-Ms": {"1500"}}, 1500 * time.Millisecond},
		{"date", http.Header{"Retry-After": {now.Add(10 * time.Second).Format(http.TimeFormat)}}, 10 * time.Second},
		{"past date", http.Header{"Retry-After": {now.Add(-time.Minute).Format(http.TimeFormat)}}, 0},
		{"garbage", http.Header{"Retry-After": {"soon"}}, 0},
		{"negative", http.Header{"Retry-After": {"-1"}}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := retryAfter(tt.h, now); got != tt.want {
				t.Fatalf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}
