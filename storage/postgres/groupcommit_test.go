package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// holdSession locks session's row in a transaction of its own and returns
// once that is done; release commits it. A store call for the session
// then waits for the row, and with it the group it was sent in.
func holdSession(t *testing.T, ctx context.Context, db *postgres.DB, session string) (release func()) {
	t.Helper()
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE key = $1 FOR UPDATE`, session); err != nil {
		t.Fatal(err)
	}
	released := false
	release = func() {
		if !released {
			released = true
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	t.Cleanup(release)
	return release
}

// waitFor polls cond every 10 ms for up to 10 s and fails the test with
// what if it never holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// blockedOnLock reports whether a statement of db's database waits for a lock.
func blockedOnLock(t *testing.T, ctx context.Context, db *postgres.DB) func() bool {
	return func() bool {
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n > 0
	}
}

// writers counts the transactions that wrote the rows sql selects (their
// xmin): rows committed together share one.
func writers(t *testing.T, ctx context.Context, db *postgres.DB, sql string, args ...any) int {
	t.Helper()
	var n int
	if err := db.Pool().QueryRow(ctx, `SELECT count(DISTINCT xmin::text) FROM (`+sql+`) r`, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// userMessage is a user's message whose external id is id.
func userMessage(id string) agentcore.Message {
	return agentcore.Message{Role: agentcore.RoleUser, Content: "text of " + id, ExternalID: id}
}

// seed stores a first user message, id session+"-1", in each session.
func seed(t *testing.T, ctx context.Context, db *postgres.DB, sessions ...string) {
	t.Helper()
	for _, s := range sessions {
		if _, err := db.Append(ctx, s, userMessage(s+"-1")); err != nil {
			t.Fatal(err)
		}
	}
}

// behindHeld calls call(i) for each i below n, each in a goroutine:
// call(0) while session "first" is held, so that its group waits for the
// row, the others once it does. When queued reports the others all
// waiting for the next group it lets "first" go, and the others go to
// PostgreSQL together. It returns when every call has returned.
func behindHeld(t *testing.T, ctx context.Context, db *postgres.DB, n int, queued func() int, call func(i int)) {
	t.Helper()
	release := holdSession(t, ctx, db, "first")
	var wg sync.WaitGroup
	wg.Go(func() { call(0) })
	waitFor(t, "the first call to wait for its session", blockedOnLock(t, ctx, db))
	for i := 1; i < n; i++ {
		wg.Go(func() { call(i) })
	}
	waitFor(t, "the others to queue", func() bool { return queued() == n-1 })
	release()
	wg.Wait()
}

// wantRepliesStored wants n replies stored and n outbox rows: each once.
func wantRepliesStored(t *testing.T, ctx context.Context, db *postgres.DB, n int) {
	t.Helper()
	var replies, rows int
	if err := db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM messages WHERE role = 'assistant'),
		(SELECT count(*) FROM outbox)`).Scan(&replies, &rows); err != nil {
		t.Fatal(err)
	}
	if replies != n || rows != n {
		t.Errorf("%d replies and %d outbox rows stored; want %d each", replies, rows, n)
	}
}

// appendsQueued and repliesQueued count the calls waiting for a group.
func appendsQueued(db *postgres.DB) func() int {
	return func() int { a, _ := db.GroupsWaiting(); return a }
}

func repliesQueued(db *postgres.DB) func() int {
	return func() int { _, r := db.GroupsWaiting(); return r }
}

// Appends made while another is in flight go to PostgreSQL together, in
// one commit; one of them failing (a redelivered message) fails none of
// the others, and each is stored once.
func TestAppendsMadeTogetherShareOneCommit(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	db.SetGroupLockTimeout(time.Minute) // the held group waits, however slow the machine
	seed(t, ctx, db, "first", "s/dup")

	type result struct {
		seq int64
		err error
	}
	// round appends firstID to "first", then ids[i] to sessions[i], all
	// of them in one group behind the first, and returns what each got.
	round := func(firstID string, sessions []string, ids []string) (result, []result) {
		got := make([]result, len(sessions)+1)
		behindHeld(t, ctx, db, len(got), appendsQueued(db), func(i int) {
			session, id := "first", firstID
			if i > 0 {
				session, id = sessions[i-1], ids[i-1]
			}
			seq, err := db.Append(ctx, session, userMessage(id))
			got[i] = result{seq, err}
		})
		return got[0], got[1:]
	}

	// Five new sessions, given in no order: one commit for all five.
	sessions := []string{"s/4", "s/2", "s/5", "s/1", "s/3"}
	ids := []string{"m4", "m2", "m5", "m1", "m3"}
	first, got := round("f2", sessions, ids)
	if first.err != nil || first.seq != 2 {
		t.Fatalf("the held append = %+v", first)
	}
	for i, r := range got {
		if r.err != nil || r.seq != 1 {
			t.Errorf("append to %s = %+v", sessions[i], r)
		}
	}
	if n := writers(t, ctx, db, `SELECT xmin FROM messages WHERE session_key LIKE 's/_'`); n != 1 {
		t.Errorf("the five appends were committed by %d transactions; want 1", n)
	}

	// A redelivery among them fails the group: the others are stored alone,
	// once each, and the redelivery is told it is one.
	sessions = []string{"s/1", "s/dup", "s/2", "s/3"}
	ids = []string{"m1b", "s/dup-1", "m2b", "m3b"}
	first, got = round("f3", sessions, ids)
	if first.err != nil || first.seq != 3 {
		t.Fatalf("the held append = %+v", first)
	}
	for i, r := range got {
		if sessions[i] == "s/dup" {
			if !errors.Is(r.err, agentcore.ErrDuplicate) {
				t.Errorf("the redelivered message got %+v; want ErrDuplicate", r)
			}
			continue
		}
		if r.err != nil || r.seq != 2 {
			t.Errorf("append to %s = %+v", sessions[i], r)
		}
	}
	var stored []string
	for _, s := range []string{"s/1", "s/2", "s/3", "s/4", "s/5", "s/dup"} {
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE session_key = $1`, s).Scan(&n); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, fmt.Sprint(s, "=", n))
	}
	if fmt.Sprint(stored) != "[s/1=2 s/2=2 s/3=2 s/4=1 s/5=1 s/dup=1]" {
		t.Errorf("messages per session: %v", stored)
	}
}

// Replies stored while another is in flight go to PostgreSQL together, in
// one commit with their outbox rows; one that must take the slow path
// (a user message came after the run's view) does so without the others
// being stored twice.
func TestRepliesMadeTogetherShareOneCommit(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	db.SetGroupLockTimeout(time.Minute)
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	answer := agentcore.Message{Role: agentcore.RoleAssistant, Content: "an answer"}
	sessions := []string{"first", "r/3", "r/1", "r/late", "r/2"}
	seed(t, ctx, db, sessions...)
	// r/late gets a second user message after its run read the first.
	if _, err := db.Append(ctx, "r/late", userMessage("r/late-2")); err != nil {
		t.Fatal(err)
	}

	type result struct {
		out bot.StoredReply
		err error
	}
	got := make([]result, len(sessions))
	behindHeld(t, ctx, db, len(sessions), repliesQueued(db), func(i int) {
		r, err := db.InsertReply(ctx, sessions[i], 1, answer, reply("", 0, "to "+sessions[i]), claim)
		got[i] = result{r, err}
	})
	for i, s := range sessions {
		r := got[i]
		wantSeq, wantMoved := int64(2), 0
		if s == "r/late" {
			wantMoved = 1
		}
		if r.err != nil || r.out.Seq != wantSeq || r.out.Moved != wantMoved || r.out.Row.ID == 0 || r.out.Row.SourceSeq != wantSeq || !r.out.Claimed {
			t.Errorf("reply to %s = %+v, %v; want seq %d, %d moved, claimed", s, r.out, r.err, wantSeq, wantMoved)
		}
	}
	// The three fast ones in one commit with their outbox rows; r/late's
	// in a transaction of its own.
	if n := writers(t, ctx, db, `SELECT xmin FROM messages WHERE session_key IN ('r/1', 'r/2', 'r/3') AND role = 'assistant'
		UNION ALL SELECT xmin FROM outbox WHERE session_key IN ('r/1', 'r/2', 'r/3')`); n != 1 {
		t.Errorf("the three replies and their outbox rows were committed by %d transactions; want 1", n)
	}
	wantRepliesStored(t, ctx, db, len(sessions))
	late, err := db.Load(ctx, "r/late", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(late) != 3 || late[1].Role != agentcore.RoleAssistant || late[2].ExternalID != "r/late-2" {
		t.Errorf("r/late = %+v; want the reply before the message that came after the run's view", late)
	}
}

// A session row held by another transaction holds up the appends to other
// sessions only until the group's lock timeout: the group gives up, each
// append runs alone, and only the held session's waits for its row.
func TestAHeldSessionHoldsUpOthersOnlyForAMoment(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	seed(t, ctx, db, "held")
	release := holdSession(t, ctx, db, "held")
	held := make(chan error, 1)
	go func() {
		_, err := db.Append(ctx, "held", userMessage("h2"))
		held <- err
	}()
	waitFor(t, "the append to wait for its session", blockedOnLock(t, ctx, db))
	// Queued behind the held one, in the next group or (once the held
	// group gave up) on their own: either way done while it is held.
	done := make(chan error, 3)
	for _, s := range []string{"o/1", "o/2", "o/3"} {
		go func() {
			_, err := db.Append(ctx, s, userMessage(s))
			done <- err
		}()
	}
	for range 3 {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
		case err := <-held:
			t.Fatalf("the held session's append returned (%v) before the others", err)
		case <-time.After(10 * time.Second): // well before groupTimeout
			t.Fatal("appends to other sessions waited for a held one")
		}
	}
	select {
	case err := <-held:
		t.Fatalf("the held session's append returned (%v) while its row was held", err)
	default:
	}
	release()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	msgs, err := db.Load(ctx, "held", 0)
	if err != nil || len(msgs) != 2 {
		t.Fatalf("held session = %+v, %v; want its two messages", msgs, err)
	}
}

// The caller that sends a group may give up (a run cancelled) while the
// group is in flight: the group still commits as one, so the others'
// replies are neither lost nor left in doubt and stored again.
func TestASenderGivingUpLeavesItsGroupWhole(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	db.SetGroupLockTimeout(time.Minute)
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	answer := agentcore.Message{Role: agentcore.RoleAssistant, Content: "an answer"}
	seed(t, ctx, db, "first", "g/a", "g/b", "g/c")
	releaseFirst := holdSession(t, ctx, db, "first")
	releaseB := holdSession(t, ctx, db, "g/b")
	store := func(ctx context.Context, session string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := db.InsertReply(ctx, session, 1, answer, reply("", 0, "to "+session), claim)
			done <- err
		}()
		return done
	}
	first := store(ctx, "first")
	waitFor(t, "the first group to wait for its session", blockedOnLock(t, ctx, db))
	// g/a queues first, so it sends the next group: g/a, g/b, g/c.
	giveUp, cancel := context.WithCancel(ctx)
	defer cancel()
	a := store(giveUp, "g/a")
	waitFor(t, "g/a to queue", func() bool { _, r := db.GroupsWaiting(); return r == 1 })
	b, c := store(ctx, "g/b"), store(ctx, "g/c")
	waitFor(t, "g/b and g/c to queue", func() bool { _, r := db.GroupsWaiting(); return r == 3 })
	releaseFirst()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the second group to wait for g/b", blockedOnLock(t, ctx, db))
	cancel()
	time.Sleep(100 * time.Millisecond) // time for a cancellation to reach the server
	releaseB()
	for name, done := range map[string]chan error{"g/a": a, "g/b": b, "g/c": c} {
		if err := <-done; err != nil {
			t.Errorf("reply to %s: %v", name, err)
		}
	}
	if n := writers(t, ctx, db, `SELECT xmin FROM messages WHERE session_key LIKE 'g/_' AND role = 'assistant'
		UNION ALL SELECT xmin FROM outbox WHERE session_key LIKE 'g/_'`); n != 1 {
		t.Errorf("the group's replies were committed by %d transactions; want 1", n)
	}
	var replies int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE session_key LIKE 'g/_' AND role = 'assistant'`).Scan(&replies); err != nil {
		t.Fatal(err)
	}
	if replies != 3 {
		t.Errorf("%d replies stored for g/a, g/b and g/c; want 3", replies)
	}
}

// A run's steps (Insert) share the appends' commits: stored while a group
// is in flight, they go together, and one on the slow path goes alone.
func TestStepsMadeTogetherShareOneCommit(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	db.SetGroupLockTimeout(time.Minute)
	step := agentcore.Message{Role: agentcore.RoleTool, Content: "a result", ToolCallID: "call-1", ToolName: "echo"}
	sessions := []string{"first", "t/2", "t/late", "t/1"}
	seed(t, ctx, db, sessions...)
	if _, err := db.Append(ctx, "t/late", userMessage("t/late-2")); err != nil {
		t.Fatal(err)
	}
	type result struct {
		last  int64
		moved int
		err   error
	}
	got := make([]result, len(sessions))
	behindHeld(t, ctx, db, len(sessions), appendsQueued(db), func(i int) {
		last, moved, err := db.Insert(ctx, sessions[i], 1, step)
		got[i] = result{last, moved, err}
	})
	for i, s := range sessions {
		r := got[i]
		wantMoved := 0
		if s == "t/late" {
			wantMoved = 1
		}
		if r.err != nil || r.last != 2 || r.moved != wantMoved {
			t.Errorf("step in %s = %+v; want seq 2, %d moved", s, r, wantMoved)
		}
	}
	if n := writers(t, ctx, db, `SELECT xmin FROM messages WHERE session_key IN ('t/1', 't/2') AND role = 'tool'`); n != 1 {
		t.Errorf("the two fast steps were committed by %d transactions; want 1", n)
	}
	var steps int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE role = 'tool'`).Scan(&steps); err != nil {
		t.Fatal(err)
	}
	if steps != len(sessions) {
		t.Errorf("%d steps stored; want %d", steps, len(sessions))
	}
}

// A group whose connection breaks in flight (a failover, an admin's
// pg_terminate_backend) fails for all its callers, who store their
// messages alone: each is stored once and none is lost.
func TestAGroupWhoseConnectionBreaksLosesNothing(t *testing.T) {
	ctx := context.Background()
	logs := &channeltest.Log{}
	db := pgtest.OpenWith(t, ctx, postgres.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	db.SetGroupLockTimeout(time.Minute)
	seed(t, ctx, db, "first", "k/2")
	releaseFirst := holdSession(t, ctx, db, "first")
	releaseK2 := holdSession(t, ctx, db, "k/2")
	appendTo := func(session string) chan error {
		done := make(chan error, 1)
		go func() {
			_, err := db.Append(ctx, session, userMessage(session+"-2"))
			done <- err
		}()
		return done
	}
	first := appendTo("first")
	waitFor(t, "the first group to wait for its session", blockedOnLock(t, ctx, db))
	k1, k2, k3 := appendTo("k/1"), appendTo("k/2"), appendTo("k/3")
	waitFor(t, "the others to queue", func() bool { a, _ := db.GroupsWaiting(); return a == 3 })
	releaseFirst()
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	// The group of k/1, k/2 and k/3 waits for k/2: break its connection.
	waitFor(t, "the group to wait for k/2", blockedOnLock(t, ctx, db))
	var killed bool
	if err := db.Pool().QueryRow(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND wait_event_type = 'Lock'`).Scan(&killed); err != nil || !killed {
		t.Fatalf("terminate the group's backend: %v, %v", killed, err)
	}
	// k/1 and k/3 are stored alone while k/2 is still held.
	for name, done := range map[string]chan error{"k/1": k1, "k/3": k3} {
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("append to %s: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the append to %s waited for a broken group's held member", name)
		}
	}
	releaseK2()
	if err := <-k2; err != nil {
		t.Errorf("append to k/2: %v", err)
	}
	var got []string
	for _, s := range []string{"first", "k/1", "k/2", "k/3"} {
		msgs, err := db.Load(ctx, s, 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(s, "=", len(msgs)))
	}
	if fmt.Sprint(got) != "[first=2 k/1=1 k/2=2 k/3=1]" {
		t.Errorf("messages per session: %v", got)
	}
	if want := `msg="group commit failed; its calls store alone" group=appends calls=3`; !strings.Contains(logs.String(), want) {
		t.Errorf("the log does not say the group failed (%s):\n%s", want, logs.String())
	}
}

// A replies group that gives up on a held session (its lock timeout) sends
// each reply alone: the others are stored at once, the held one's once its
// row is free, each exactly once.
func TestARepliesGroupThatGivesUpStoresEachAlone(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	claim := bot.Claim{Owner: "replica-1", Lease: time.Minute}
	answer := agentcore.Message{Role: agentcore.RoleAssistant, Content: "an answer"}
	sessions := []string{"r/1", "r/held", "r/3"}
	seed(t, ctx, db, sessions...)
	release := holdSession(t, ctx, db, "r/held")
	done := make(map[string]chan error)
	for _, s := range sessions {
		done[s] = make(chan error, 1)
		go func() {
			_, err := db.InsertReply(ctx, s, 1, answer, reply("", 0, "to "+s), claim)
			done[s] <- err
		}()
	}
	for _, s := range []string{"r/1", "r/3"} {
		select {
		case err := <-done[s]:
			if err != nil {
				t.Errorf("reply to %s: %v", s, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("the reply to %s waited for a held session", s)
		}
	}
	release()
	if err := <-done["r/held"]; err != nil {
		t.Errorf("reply to r/held: %v", err)
	}
	wantRepliesStored(t, ctx, db, len(sessions))
}

// Usage records made while another is in flight go to PostgreSQL together,
// in one commit; a record PostgreSQL refuses (a NUL byte) fails only its
// own call, and every other record is stored once.
func TestUsageRecordsMadeTogetherShareOneCommit(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	db.SetGroupLockTimeout(time.Minute)
	good := []string{"telegram:0", "telegram:1", "telegram:2", "telegram:3"}
	for i, err := range usageBehindLock(t, ctx, db, good) {
		if err != nil {
			t.Errorf("record %d: %v", i, err)
		}
	}
	if w := writers(t, ctx, db, `SELECT xmin FROM llm_usage WHERE identity <> 'telegram:0'`); w != 1 {
		t.Errorf("the queued records were committed by %d transactions; want 1", w)
	}

	mixed := []string{"slack:0", "slack:1", "slack:\x00bad", "slack:3"}
	for i, err := range usageBehindLock(t, ctx, db, mixed) {
		if (err != nil) != (i == 2) {
			t.Errorf("record %s: err %v", mixed[i], err)
		}
	}
	var stored, distinct int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*), count(DISTINCT identity) FROM llm_usage`).Scan(&stored, &distinct); err != nil {
		t.Fatal(err)
	}
	if want := len(good) + len(mixed) - 1; stored != want || distinct != want {
		t.Errorf("%d records stored (%d identities); want each good one once: %d", stored, distinct, want)
	}
}

// usageBehindLock inserts a usage record of each identity: the first while
// a table lock holds its group in flight, the others once they queue for
// the next group. It returns each call's error.
func usageBehindLock(t *testing.T, ctx context.Context, db *postgres.DB, identities []string) []error {
	t.Helper()
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	if _, err := tx.Exec(ctx, `LOCK TABLE llm_usage IN SHARE MODE`); err != nil {
		t.Fatal(err)
	}
	errs := make([]error, len(identities))
	insert := func(i int) {
		errs[i] = db.InsertUsage(ctx, usage.Record{Identity: identities[i], Model: "m", Tokens: usage.Tokens{Input: 10}})
	}
	var wg sync.WaitGroup
	wg.Go(func() { insert(0) })
	waitFor(t, "the first record to wait for the table", blockedOnLock(t, ctx, db))
	for i := 1; i < len(identities); i++ {
		wg.Go(func() { insert(i) })
	}
	waitFor(t, "the others to queue", func() bool { return db.UsageWaiting() == len(identities)-1 })
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	return errs
}
