package channels_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

func TestReconnect(t *testing.T) {
	ctx := context.Background()
	var errDown, errToken, errLost = errors.New("down"), errors.New("bad token"), errors.New("lost")
	r := channels.Reconnect{Health: channels.NewHealth("test", nil, nil), Op: "connect", Min: time.Millisecond, Max: 4 * time.Millisecond,
		Fatal: func(err error) error {
			if errors.Is(err, errToken) {
				return errors.New("the token was rejected; check it")
			}
			return nil
		},
		Fresh: func(err error) bool { return errors.Is(err, errLost) }}

	script := func(errs ...error) (func(context.Context) error, *int) {
		n := new(int)
		return func(context.Context) error {
			*n++
			if *n <= len(errs) {
				return errs[*n-1]
			}
			return nil
		}, n
	}
	fn, calls := script(errDown, errLost, errDown)
	if err := r.Run(ctx, fn); err != nil || *calls != 4 {
		t.Fatalf("retrying failures: %v after %d calls, want success after 4", err, *calls)
	}
	fn, calls = script(errDown, errToken, errDown)
	err := r.Run(ctx, fn)
	if err == nil || err.Error() != "the token was rejected; check it" || *calls != 2 {
		t.Fatalf("fatal error: %v after %d calls", err, *calls)
	}
	if err := r.Health.Ready(ctx); err == nil || err.Error() != "the token was rejected; check it" {
		t.Fatalf("Ready after a fatal error = %v, want the fatal error", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	fn, _ = script(errDown, errDown)
	if err := r.Run(cancelled, fn); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
