package bot

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// A lane runs its session's jobs in order, holds at most QueueDepth
// waiting ones (a run that waits answers every message stored before it
// starts, so more would only repeat it), and is gone once it is done.
func TestLanesRunInOrderAndBoundTheQueue(t *testing.T) {
	var mu sync.Mutex
	var ran []string
	release := make(chan struct{})
	l := newLanes(LaneOptions{QueueDepth: 2}, func(_ context.Context, j laneJob) {
		if j.ReplyTo == "1" {
			<-release
		}
		mu.Lock()
		ran = append(ran, j.ReplyTo)
		mu.Unlock()
	}, slog.New(slog.DiscardHandler))

	l.enqueue(laneJob{Session: "s", ReplyTo: "1"})
	waitUntil(t, "job 1 runs", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.queues["s"].q) == 0
	})
	for _, id := range []string{"2", "3", "4"} {
		if !l.enqueue(laneJob{Session: "s", ReplyTo: id}) {
			t.Fatalf("job %s refused while the lanes are open", id)
		}
	}
	close(release)
	if err := l.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(ran, ","); got != "1,2,3" {
		t.Errorf("ran %s, want 1,2,3 (4 found the queue full)", got)
	}
	if n := len(l.queues); n != 0 {
		t.Errorf("%d lanes left after every job ran", n)
	}
	if l.enqueue(laneJob{Session: "s", ReplyTo: "5"}) {
		t.Error("a job was taken after close")
	}
}
