package postgres

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A prune pass resting between pages stops at once when its context ends
// (shutdown), and says why.
func TestPruneRestEndsWithItsContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := pruneRest(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Errorf("pruneRest on a cancelled context = %v; want context.Canceled", err)
	}
	if err := pruneRest(context.Background(), time.Millisecond); err != nil {
		t.Errorf("pruneRest = %v; want nil after its rest", err)
	}
}
