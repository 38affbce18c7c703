package bot

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
)

// A message's window reaches its run only when no run of the session
// started between its append and its job: otherwise the window may lack
// what that run wrote.
func TestLanesKeepAWindowOnlyWhenNoRunCameBetween(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]agentcore.Message{}
	release := make(chan struct{})
	started := make(chan string, 4)
	l := newLanes(LaneOptions{}, func(_ context.Context, j laneJob) {
		mu.Lock()
		got[j.ReplyTo] = j.window
		mu.Unlock()
		started <- j.ReplyTo
		if j.ReplyTo == "first" {
			<-release
		}
	}, slog.New(slog.DiscardHandler))
	w := []agentcore.Message{{Role: agentcore.RoleUser, Content: "hi", Seq: 1}}

	// Idle session: the window goes through.
	t1 := l.begin("s")
	l.enqueue(laneJob{Session: "s", ReplyTo: "first", window: w, ticket: t1})
	<-started
	// Appended while "first" runs: dropped.
	t2 := l.begin("s")
	l.enqueue(laneJob{Session: "s", ReplyTo: "second", window: w, ticket: t2})
	// Ticket taken while "first" runs, job queued after it finished: a
	// run came between, dropped too.
	t3 := l.begin("s")
	close(release)
	<-started // second
	waitUntil(t, "the lane is idle", func() bool {
		l.mu.Lock()
		defer l.mu.Unlock()
		return !l.queues["s"].running
	})
	l.enqueue(laneJob{Session: "s", ReplyTo: "third", window: w, ticket: t3})
	<-started
	// A ticket given back without a job leaves nothing behind.
	t4 := l.begin("other")
	l.end("other", t4)
	if err := l.close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if got["first"] == nil || got["second"] != nil || got["third"] != nil {
		t.Errorf("windows: first %v, second %v, third %v; want only first's", got["first"], got["second"], got["third"])
	}
	if len(l.queues) != 0 {
		t.Errorf("%d lanes left behind", len(l.queues))
	}
}

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
