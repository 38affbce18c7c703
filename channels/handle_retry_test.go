package channels

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestHandleRetryCallsUntilStored(t *testing.T) {
	var buf bytes.Buffer
	r := NewHandleRetry("telegram", slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})),
		time.Millisecond, 5*time.Millisecond)
	errDown := errors.New("db down")
	for round := range 2 { // two failure streaks, each logged once
		calls := 0
		err := r.Do(context.Background(), func(context.Context, Inbound) error {
			calls++
			if calls <= 3 {
				return errDown
			}
			return nil
		}, Inbound{ExternalID: "7"})
		if err != nil || calls != 4 {
			t.Fatalf("round %d: Do = %v after %d calls, want nil after 4", round, err, calls)
		}
	}
	logs := buf.String()
	if n := strings.Count(logs, "event not stored"); n != 2 {
		t.Errorf("%d warnings for two streaks, want 2:\n%s", n, logs)
	}
	if n := strings.Count(logs, "events stored again"); n != 2 {
		t.Errorf("%d recovery lines for two streaks, want 2:\n%s", n, logs)
	}

	// A handler that succeeds at once is called once and logs nothing.
	buf.Reset()
	calls := 0
	if err := r.Do(context.Background(), func(context.Context, Inbound) error { calls++; return nil }, Inbound{}); err != nil || calls != 1 {
		t.Errorf("Do = %v after %d calls", err, calls)
	}
	if buf.Len() != 0 {
		t.Errorf("a stored event was logged:\n%s", buf.String())
	}
}

func TestHandleRetryStopsWithContext(t *testing.T) {
	r := NewHandleRetry("discord", slog.New(slog.DiscardHandler), time.Millisecond, 5*time.Millisecond)
	errDown := errors.New("db down")
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	err := r.Do(ctx, func(context.Context, Inbound) error {
		calls++
		if calls == 3 {
			cancel()
		}
		return errDown
	}, Inbound{ExternalID: "9"})
	if !errors.Is(err, errDown) || calls != 3 {
		t.Errorf("Do = %v after %d calls, want the handler's error after 3", err, calls)
	}
	if r.failing != 0 {
		t.Errorf("%d events still counted as failing", r.failing)
	}
}
