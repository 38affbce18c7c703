package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestHistoryRoundTripsEveryField(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	session := agentcore.SessionKey{Agent: "helper", Scope: "telegram:42"}.String()

	want := []agentcore.Message{
		{Role: agentcore.RoleUser, Content: "what's the weather?", ExternalID: "upd-1"},
		{Role: agentcore.RoleAssistant, Content: "let me check", ToolCalls: []agentcore.ToolCall{
			{ID: "call_1", Name: "web_fetch", Arguments: json.RawMessage(`{"url":"https://example.com","n":1}`)},
			// Models sometimes produce invalid JSON; it must survive as is.
			{ID: "call_2", Name: "exec", Arguments: json.RawMessage(`{"cmd": "ls"`)},
		}},
		{Role: agentcore.RoleTool, Content: "sunny", ToolCallID: "call_1", ToolName: "web_fetch"},
		{Role: agentcore.RoleTool, Content: "bad json", ToolCallID: "call_2", ToolName: "exec", IsError: true},
		{Role: agentcore.RoleAssistant, Content: "It is sunny."},
	}
	last, err := db.Append(ctx, session, want[:2]...)
	if err != nil {
		t.Fatal(err)
	}
	if last != 2 {
		t.Errorf("first Append lastSeq = %d, want 2", last)
	}
	if last, err = db.Append(ctx, session, want[2:]...); err != nil || last != 5 {
		t.Fatalf("second Append = %d, %v; want 5, nil", last, err)
	}

	got, err := db.Load(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range want {
		want[i].Seq = int64(i + 1) // Load reports each message's place
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Load mismatch\n got %#v\nwant %#v", got, want)
	}

	newest, err := db.Load(ctx, session, 2)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(newest, want[3:]) {
		t.Errorf("Load(limit 2) = %#v, want the last two in order", newest)
	}

	var agent, scope string
	if err := db.Pool().QueryRow(ctx, `SELECT agent, scope FROM sessions WHERE key = $1`, session).Scan(&agent, &scope); err != nil {
		t.Fatal(err)
	}
	if agent != "helper" || scope != "telegram:42" {
		t.Errorf("session row agent %q scope %q", agent, scope)
	}
}

func TestHistoryUnknownSessionAndEmptyAppend(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	msgs, err := db.Load(ctx, "nobody/nowhere", 10)
	if err != nil || len(msgs) != 0 {
		t.Fatalf("Load(unknown) = %v, %v; want none", msgs, err)
	}
	if last, err := db.Append(ctx, "a/b"); err != nil || last != 0 {
		t.Fatalf("empty Append on new session = %d, %v; want 0, nil", last, err)
	}
	if _, err := db.Append(ctx, "a/b", agentcore.Message{Role: agentcore.RoleUser, Content: "hi"}); err != nil {
		t.Fatal(err)
	}
	if last, err := db.Append(ctx, "a/b"); err != nil || last != 1 {
		t.Fatalf("empty Append = %d, %v; want 1, nil", last, err)
	}
}

func TestHistoryUnparsableKey(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if _, err := db.Append(ctx, "no-slash", agentcore.Message{Role: agentcore.RoleUser, Content: "x"}); err != nil {
		t.Fatal(err)
	}
	var agent, scope string
	if err := db.Pool().QueryRow(ctx, `SELECT agent, scope FROM sessions WHERE key = 'no-slash'`).Scan(&agent, &scope); err != nil {
		t.Fatal(err)
	}
	if agent != "" || scope != "no-slash" {
		t.Errorf("agent %q scope %q, want empty agent and the key as scope", agent, scope)
	}
}

func TestHistoryStoresUnstorableText(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	bad := "bin\x00ary \xff end"
	if _, err := db.Append(ctx, "a/b", agentcore.Message{Role: agentcore.RoleTool, Content: bad, ToolCallID: "c",
		ToolName: "fs_read"}); err != nil {
		t.Fatalf("Append with NUL and invalid UTF-8: %v", err)
	}
	got, err := db.Load(ctx, "a/b", 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := "bin\uFFFDary \uFFFD end"; len(got) != 1 || got[0].Content != want {
		t.Errorf("Load = %#v, want content %q", got, want)
	}
}

func TestHistoryDuplicateExternalID(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s := "a/telegram:1"
	if _, err := db.Append(ctx, s, agentcore.Message{Role: agentcore.RoleUser, Content: "one", ExternalID: "u1"}); err != nil {
		t.Fatal(err)
	}
	// The whole call fails, including the message before the duplicate.
	_, err := db.Append(ctx, s,
		agentcore.Message{Role: agentcore.RoleUser, Content: "two", ExternalID: "u2"},
		agentcore.Message{Role: agentcore.RoleUser, Content: "one again", ExternalID: "u1"})
	if !errors.Is(err, agentcore.ErrDuplicate) {
		t.Fatalf("Append duplicate = %v, want ErrDuplicate", err)
	}
	msgs, err := db.Load(ctx, s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 || msgs[0].Content != "one" {
		t.Errorf("after rejected append: %#v, want only the first message", msgs)
	}
	var lastSeq int64
	if err := db.Pool().QueryRow(ctx, `SELECT last_seq FROM sessions WHERE key = $1`, s).Scan(&lastSeq); err != nil {
		t.Fatal(err)
	}
	if lastSeq != 1 {
		t.Errorf("sessions.last_seq = %d after the rejected append, want 1 (not bumped)", lastSeq)
	}
	// The same ExternalID in another session is fine, and so are messages without one.
	if _, err := db.Append(ctx, "a/telegram:2", agentcore.Message{Role: agentcore.RoleUser, ExternalID: "u1"}); err != nil {
		t.Errorf("same ExternalID in another session: %v", err)
	}
	if last, err := db.Append(ctx, s, agentcore.Message{Role: agentcore.RoleAssistant}, agentcore.Message{Role: agentcore.RoleAssistant}); err != nil || last != 3 {
		t.Errorf("Append without ExternalIDs = %d, %v; want 3, nil (seq continues after the rejected call)", last, err)
	}
}

func TestHistoryConcurrentAppendsGetDistinctSeqs(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const writers, perWriter = 20, 3
	s := "a/busy"
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				if _, err := db.Append(ctx, s, agentcore.Message{Role: agentcore.RoleUser, Content: fmt.Sprintf("%d-%d", w, i)}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	rows, err := db.Pool().Query(ctx, `SELECT seq FROM messages WHERE session_key = $1 ORDER BY seq`, s)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := int64(1)
	for rows.Next() {
		var seq int64
		if err := rows.Scan(&seq); err != nil {
			t.Fatal(err)
		}
		if seq != want {
			t.Fatalf("seq %d where %d expected: gap or duplicate", seq, want)
		}
		want++
	}
	if got := want - 1; got != writers*perWriter {
		t.Errorf("%d messages stored, want %d", got, writers*perWriter)
	}
}

func TestHistoryConcurrentDuplicateExternalID(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const tries = 8
	var wg sync.WaitGroup
	results := make([]error, tries)
	for i := range tries {
		wg.Go(func() {
			_, results[i] = db.Append(ctx, "a/race", agentcore.Message{Role: agentcore.RoleUser, Content: "hi", ExternalID: "same"})
		})
	}
	wg.Wait()
	var ok, dup int
	for _, err := range results {
		switch {
		case err == nil:
			ok++
		case errors.Is(err, agentcore.ErrDuplicate):
			dup++
		default:
			t.Errorf("unexpected error: %v", err)
		}
	}
	if ok != 1 || dup != tries-1 {
		t.Errorf("%d succeeded and %d were duplicates, want 1 and %d", ok, dup, tries-1)
	}
	msgs, err := db.Load(ctx, "a/race", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 1 {
		t.Errorf("%d messages stored, want 1", len(msgs))
	}
}

func TestHistoryConcurrentBatchesGetContiguousSeqs(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const writers, calls, batch = 12, 4, 3
	s := "a/batches"
	type call struct {
		writer, call int
		last         int64
	}
	results := make(chan call, writers*calls)
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for c := range calls {
				msgs := make([]agentcore.Message, batch)
				for k := range msgs {
					msgs[k] = agentcore.Message{Role: agentcore.RoleUser, Content: fmt.Sprintf("%d-%d-%d", w, c, k),
						ExternalID: fmt.Sprintf("ext-%d-%d-%d", w, c, k)}
				}
				last, err := db.Append(ctx, s, msgs...)
				if err != nil {
					errs <- err
					return
				}
				results <- call{writer: w, call: c, last: last}
			}
		})
	}
	wg.Wait()
	close(errs)
	close(results)
	for err := range errs {
		t.Fatal(err)
	}
	seqOf := map[string]int64{}
	rows, err := db.Pool().Query(ctx, `SELECT seq, content FROM messages WHERE session_key = $1`, s)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var (
			seq     int64
			content string
		)
		if err := rows.Scan(&seq, &content); err != nil {
			t.Fatal(err)
		}
		seqOf[content] = seq
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(seqOf) != writers*calls*batch {
		t.Fatalf("%d messages stored, want %d", len(seqOf), writers*calls*batch)
	}
	// Each call's messages sit together, in order, ending at the seq it returned.
	for r := range results {
		for k := range batch {
			content := fmt.Sprintf("%d-%d-%d", r.writer, r.call, k)
			if want := r.last - batch + 1 + int64(k); seqOf[content] != want {
				t.Errorf("%q has seq %d, want %d (its call returned %d)", content, seqOf[content], want, r.last)
			}
		}
	}
	var lastSeq int64
	if err := db.Pool().QueryRow(ctx, `SELECT last_seq FROM sessions WHERE key = $1`, s).Scan(&lastSeq); err != nil {
		t.Fatal(err)
	}
	if lastSeq != writers*calls*batch {
		t.Errorf("sessions.last_seq = %d, want %d", lastSeq, writers*calls*batch)
	}
}

func TestInsertMovesMessagesThatArrivedMeanwhile(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const session = "a/telegram:1"
	user := func(text, id string) agentcore.Message {
		return agentcore.Message{Role: agentcore.RoleUser, Content: text, ExternalID: id}
	}
	if _, err := db.Append(ctx, session, user("first", "u1")); err != nil {
		t.Fatal(err)
	}
	// Nothing arrived meanwhile: the fast path.
	seq, moved, err := db.Insert(ctx, session, 1, agentcore.Message{Role: agentcore.RoleAssistant, Content: "answer 1"})
	if err != nil || seq != 2 || moved != 0 {
		t.Fatalf("Insert = %d, %d moved, %v; want 2, 0, nil", seq, moved, err)
	}
	// The model is working on "second" (seq 3) when "third" and "fourth" arrive.
	for i, text := range []string{"second", "third", "fourth"} {
		if _, err := db.Append(ctx, session, user(text, fmt.Sprint("u", i+2))); err != nil {
			t.Fatal(err)
		}
	}
	seq, moved, err = db.Insert(ctx, session, 3,
		agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{{ID: "c1", Name: "datetime"}}},
		agentcore.Message{Role: agentcore.RoleTool, ToolCallID: "c1", ToolName: "datetime", Content: "noon"})
	if err != nil || seq != 5 || moved != 2 {
		t.Fatalf("Insert with messages after = %d, %d moved, %v; want 5, 2, nil", seq, moved, err)
	}
	got, err := db.Load(ctx, session, 0)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for i, m := range got {
		if m.Seq != int64(i+1) {
			t.Errorf("message %d has seq %d", i, m.Seq)
		}
		order = append(order, string(m.Role)+":"+m.Content)
	}
	want := []string{"user:first", "assistant:answer 1", "user:second", "assistant:", "tool:noon", "user:third", "user:fourth"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("order = %q\nwant %q", order, want)
	}
	if last, err := db.Append(ctx, session); err != nil || last != 7 {
		t.Errorf("last_seq = %d, %v; want 7", last, err)
	}
	// The moved messages keep their ExternalIDs: a redelivery is still a duplicate.
	if _, err := db.Append(ctx, session, user("third", "u3")); !errors.Is(err, agentcore.ErrDuplicate) {
		t.Errorf("redelivered moved message: err = %v, want ErrDuplicate", err)
	}
	// A non-user message after the position means a concurrent run: refused, nothing stored.
	if _, _, err := db.Insert(ctx, session, 3, agentcore.Message{Role: agentcore.RoleAssistant, Content: "late"}); !errors.Is(err, agentcore.ErrConflict) {
		t.Errorf("Insert behind another run's step: err = %v, want ErrConflict", err)
	}
	if again, _ := db.Load(ctx, session, 0); len(again) != 7 {
		t.Errorf("a refused Insert changed the session: %d messages", len(again))
	}
}

// Messages keep no foreign key to sessions (migration 16); deleting a
// session must still delete its messages, and only its.
func TestDeletingASessionDeletesItsMessages(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for _, s := range []string{"helper/telegram:1", "helper/telegram:2"} {
		if _, err := db.Append(ctx, s,
			agentcore.Message{Role: agentcore.RoleUser, Content: "hi"},
			agentcore.Message{Role: agentcore.RoleAssistant, Content: "hello"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Pool().Exec(ctx, `DELETE FROM sessions WHERE key = $1`, "helper/telegram:1"); err != nil {
		t.Fatal(err)
	}
	count := func(session string) int {
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM messages WHERE session_key = $1`, session).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := count("helper/telegram:1"); n != 0 {
		t.Errorf("deleted session still has %d messages", n)
	}
	if n := count("helper/telegram:2"); n != 2 {
		t.Errorf("the other session has %d messages, want 2", n)
	}
}
