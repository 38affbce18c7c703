package bot

import (
	"context"
	"log/slog"
	"time"
)

// repeat calls pass now and then every interval until ctx ends. A run of
// failures is logged twice: when it starts ("<what> failed; will keep
// trying") and when a pass works again, so an outage does not flood the
// log.
func repeat(ctx context.Context, interval time.Duration, log *slog.Logger, what string, pass func(context.Context) error) {
	RepeatPaced(ctx, log, what, pass, func() time.Duration { return interval }, nil)
}

// RepeatPaced calls pass until ctx ends, logging a run of failures as repeat
// does; after each pass it waits as long as wait says, cut short by a signal
// on wake. Features use it for their background loops.
func RepeatPaced(ctx context.Context, log *slog.Logger, what string, pass func(context.Context) error, wait func() time.Duration, wake <-chan struct{}) {
	failing := false
	for ctx.Err() == nil {
		err := pass(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			log.Warn(what+" failed; will keep trying", "err", err)
			failing = true
		case err == nil && failing:
			log.Info(what + " works again")
			failing = false
		}
		t := time.NewTimer(wait())
		select {
		case <-ctx.Done():
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// Sleep waits d; it reports false, sooner, when ctx ends first. The
// pipeline's background loops and those of features wait with it.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
