package bot_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// TestLeaderOneAtATime: two replicas compete for one task; only one runs it
// at any moment, and when the leader stops the other takes over.
func TestLeaderOneAtATime(t *testing.T) {
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	open := func() *redis.Store {
		s, err := redis.Open(context.Background(), url, redis.Options{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	var running, maxRunning, runs atomic.Int32
	task := func(ctx context.Context) error {
		n := running.Add(1)
		runs.Add(1)
		for {
			if m := maxRunning.Load(); n <= m || maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		<-ctx.Done()
		running.Add(-1)
		return nil
	}
	a := &bot.Leader{Locker: open(), Key: "leader:test", TTL: 600 * time.Millisecond}
	b := &bot.Leader{Locker: open(), Key: "leader:test", TTL: 600 * time.Millisecond}
	ctxA, stopA := context.WithCancel(context.Background())
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	doneA := make(chan struct{})
	go func() { a.Run(ctxA, task); close(doneA) }()
	go b.Run(ctxB, task)

	deadline := time.Now().Add(5 * time.Second)
	for !(a.Held() || b.Held()) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second) // several refresh periods with both competing
	if a.Held() == b.Held() {
		t.Fatalf("exactly one replica must lead: a=%v b=%v", a.Held(), b.Held())
	}
	if maxRunning.Load() != 1 {
		t.Fatalf("the task ran on %d replicas at once", maxRunning.Load())
	}
	first := a
	if b.Held() {
		stopB() // make b the one that goes away
		first = b
	} else {
		stopA()
		<-doneA
	}
	other := map[*bot.Leader]*bot.Leader{a: b, b: a}[first]
	deadline = time.Now().Add(5 * time.Second)
	for !other.Held() && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if !other.Held() {
		t.Fatal("the standby replica did not take over")
	}
	if maxRunning.Load() != 1 || runs.Load() < 2 {
		t.Fatalf("max concurrent %d, runs %d", maxRunning.Load(), runs.Load())
	}
	stopA()
	stopB()
}
