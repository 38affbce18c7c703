package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestAppendWindowReturnsTheNewestMessages(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/telegram:7"
	user := func(i int) agentcore.Message {
		return agentcore.Message{Role: agentcore.RoleUser, Content: fmt.Sprint("m", i), ExternalID: fmt.Sprint("e", i)}
	}
	// A new session: the window is the message itself.
	seq, window, err := db.AppendWindow(ctx, session, 3, user(1))
	if err != nil || seq != 1 || len(window) != 1 || window[0].Content != "m1" || window[0].Seq != 1 || window[0].ExternalID != "e1" {
		t.Fatalf("AppendWindow = %d, %+v, %v", seq, window, err)
	}
	for i := 2; i <= 4; i++ {
		if _, err := db.Append(ctx, session, user(i)); err != nil {
			t.Fatal(err)
		}
	}
	// The newest 3, ending with the new one — what Load would return.
	seq, window, err = db.AppendWindow(ctx, session, 3, user(5))
	if err != nil || seq != 5 {
		t.Fatalf("AppendWindow = %d, %v", seq, err)
	}
	load, err := db.Load(ctx, session, 3)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(window) != fmt.Sprint(load) {
		t.Errorf("window = %+v\nLoad   = %+v", window, load)
	}
	// 0: all of them.
	_, window, err = db.AppendWindow(ctx, session, 0, user(6))
	if err != nil || len(window) != 6 || window[0].Seq != 1 || window[5].Content != "m6" {
		t.Fatalf("AppendWindow(0) = %+v, %v", window, err)
	}
	// A redelivery is a duplicate and stores nothing.
	if _, _, err := db.AppendWindow(ctx, session, 3, user(6)); err == nil {
		t.Fatal("a repeated external id was stored again")
	}
	// An append that committed while this one waited for the session row
	// is missing from the statement's snapshot: no window then, not a
	// wrong one.
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `UPDATE sessions SET last_seq = last_seq + 1 WHERE key = $1`, session); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO messages (session_key, seq, role, content) VALUES ($1, 7, 'user', 'concurrent')`, session); err != nil {
		t.Fatal(err)
	}
	type result struct {
		seq    int64
		window []agentcore.Message
		err    error
	}
	done := make(chan result)
	go func() {
		seq, window, err := db.AppendWindow(ctx, session, 3, user(8))
		done <- result{seq, window, err}
	}()
	// The statement is blocked on the session row until the commit.
	waitForLockWait(t, db)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.seq != 8 || r.window != nil {
		t.Fatalf("AppendWindow behind a concurrent append = %d, %+v, %v; want seq 8 and no window", r.seq, r.window, r.err)
	}
}

// waitForLockWait waits until some session of the test's database waits
// for a row lock.
func waitForLockWait(t *testing.T, db interface {
	Pool() *pgxpool.Pool
}) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var n int
		if err := db.Pool().QueryRow(context.Background(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no statement waits for a lock after 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
