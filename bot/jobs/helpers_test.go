package jobs_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// oneAgent finds the default agent alone, as a Router given no other
// agents does.
type oneAgent struct{ run bot.Runner }

func (a oneAgent) Agent(name string) (string, bot.Runner, bool) {
	if name == "" || name == "default" {
		return "default", a.run, a.run != nil
	}
	return name, nil, false
}

// recorder is a channel that records what is sent to it.
type recorder struct {
	mu   sync.Mutex
	sent []channels.Outbound
	cond *sync.Cond
}

func newRecorder() *recorder {
	r := &recorder{}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) Platform() string { return "test" }

func (r *recorder) Start(ctx context.Context, _ channels.Handler) error {
	<-ctx.Done()
	return nil
}

func (r *recorder) Send(_ context.Context, m channels.Outbound) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent = append(r.sent, m)
	r.cond.Broadcast()
	return fmt.Sprint(len(r.sent)), nil
}

// waitFor waits until n messages were sent to chat and returns them.
func (r *recorder) waitFor(t *testing.T, chat string, n int) []channels.Outbound {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	go func() { time.Sleep(time.Until(deadline)); r.cond.Broadcast() }()
	r.mu.Lock()
	defer r.mu.Unlock()
	for {
		var got []channels.Outbound
		for _, m := range r.sent {
			if m.To.ChatID == chat {
				got = append(got, m)
			}
		}
		if len(got) >= n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("chat %s: %d messages, want %d: %+v", chat, len(got), n, got)
		}
		r.cond.Wait()
	}
}

func (r *recorder) count(chat string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, m := range r.sent {
		if m.To.ChatID == chat {
			n++
		}
	}
	return n
}

// waitUntil polls cond until it holds, failing the test after 10 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after 10s waiting until %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// rowExists reports whether table holds the row id.
func rowExists(t *testing.T, db *postgres.DB, table string, id int64) bool {
	t.Helper()
	var n int
	if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM `+table+` WHERE id = $1`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n == 1
}

// runUntilPruned runs a component (its Run, pruning on a short beat) until
// the row old is gone from table, and checks that the row kept stays.
func runUntilPruned(t *testing.T, db *postgres.DB, table string, run func(context.Context), old, kept int64, why string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitUntil(t, "the old row of "+table+" is pruned", func() bool { return !rowExists(t, db, table, old) })
	if !rowExists(t, db, table, kept) {
		t.Errorf("row %d of %s was pruned; it should stay: %s", kept, table, why)
	}
}

// checkPruneTakesTurns: while another replica holds lock, a pass skips
// (0 rows, no error); once it is free, the pass deletes want rows and gives
// the lock back.
func checkPruneTakesTurns(t *testing.T, db *postgres.DB, lock string, pass func(context.Context) (int, error), want int) {
	t.Helper()
	ctx := context.Background()
	other, led, err := db.TryLead(ctx, lock) // another replica's pass
	if err != nil || !led {
		t.Fatalf("TryLead = %v, %v; want the lock", led, err)
	}
	if n, err := pass(ctx); err != nil || n != 0 {
		t.Errorf("prune while another replica prunes = %d, %v; want 0, nil (skipped)", n, err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := pass(ctx); err != nil || n != want {
		t.Errorf("prune once the other is done = %d, %v; want %d, nil", n, err, want)
	}
	again, led, err := db.TryLead(ctx, lock)
	if err != nil || !led {
		t.Fatalf("after a pass, TryLead = %v, %v; want the lock free", led, err)
	}
	_ = again.Release(ctx)
}
