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
	release := make(chan struct{})
	l, ran := recordingLanes(LaneOptions{QueueDepth: 2}, "1", release)

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
	if got := ran(); got != "1,2,3" {
		t.Errorf("ran %s, want 1,2,3 (4 found the queue full)", got)
	}
	if n := len(l.queues); n != 0 {
		t.Errorf("%d lanes left after every job ran", n)
	}
	if l.enqueue(laneJob{Session: "s", ReplyTo: "5"}) {
		t.Error("a job was taken after close")
	}
}

// Recovery's run of a session is not queued behind a run of it here: that
// run finishes the session, and the recovered one, which knows no sender,
// would otherwise answer a message sent meanwhile before its own run.
func TestLanesLeaveARecoveredRunToTheLanesRun(t *testing.T) {
	release := make(chan struct{})
	l, ran := recordingLanes(LaneOptions{}, "resume", release)

	l.enqueue(laneJob{Session: "s", ReplyTo: "resume"})
	waitUntil(t, "the resume runs", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.queues["s"].q) == 0
	})
	if !l.enqueue(laneJob{Session: "s", ReplyTo: "recovered", recovered: true}) {
		t.Fatal("a recovered job refused while the lanes are open")
	}
	l.enqueue(laneJob{Session: "s", ReplyTo: "message"})
	close(release)
	waitUntil(t, "the lane to drain", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return len(l.queues) == 0
	})
	// With the lane gone, recovery's run is taken again.
	l.enqueue(laneJob{Session: "s", ReplyTo: "later", recovered: true})
	if err := l.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := ran(); got != "resume,message,later" {
		t.Errorf("ran %s, want resume,message,later", got)
	}
}

// recordingLanes returns lanes whose runs record their ReplyTo, the run of
// blockOn waiting for release, and what ran so far, comma-separated.
func recordingLanes(o LaneOptions, blockOn string, release <-chan struct{}) (*lanes, func() string) {
	var mu sync.Mutex
	var ran []string
	l := newLanes(o, func(_ context.Context, j laneJob) {
		if j.ReplyTo == blockOn {
			<-release
		}
		mu.Lock()
		ran = append(ran, j.ReplyTo)
		mu.Unlock()
	}, slog.New(slog.DiscardHandler))
	return l, func() string {
		mu.Lock()
		defer mu.Unlock()
		return strings.Join(ran, ",")
	}
}
