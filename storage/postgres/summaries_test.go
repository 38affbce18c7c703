package postgres_test

import (
	"context"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestSummaryKeepsTheFurthestAndResetHidesIt(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s := agentcore.SessionKey{Agent: "helper", Scope: "telegram:42"}.String()
	appendAll(t, db, s, user("u1"), answer("a1"), user("u2"), answer("a2"), user("u3"), answer("a3"))

	if got, err := db.Summary(ctx, s); err != nil || got.Text != "" || got.Floor != 0 {
		t.Fatalf("Summary of a session without one = %+v, %v; want zero", got, err)
	}
	if ok, err := db.SaveSummary(ctx, s, agentcore.Summary{FromSeq: 1, ToSeq: 2, Text: "first\x00"}); err != nil || !ok {
		t.Fatalf("SaveSummary 1..2 = %v, %v; want stored", ok, err)
	}
	// A second replica's summary of the same stretch is not kept twice.
	if ok, err := db.SaveSummary(ctx, s, agentcore.Summary{FromSeq: 1, ToSeq: 2, Text: "again"}); err != nil || ok {
		t.Fatalf("SaveSummary 1..2 again = %v, %v; want not stored", ok, err)
	}
	if ok, err := db.SaveSummary(ctx, s, agentcore.Summary{FromSeq: 1, ToSeq: 4, Text: "second"}); err != nil || !ok {
		t.Fatalf("SaveSummary 1..4 = %v, %v; want stored", ok, err)
	}
	got, err := db.Summary(ctx, s)
	if err != nil || got.Text != "second" || got.FromSeq != 1 || got.ToSeq != 4 {
		t.Fatalf("Summary = %+v, %v; want second, 1..4", got, err)
	}
	msgs, err := db.LoadRange(ctx, s, 2, 6, 10)
	if err != nil || len(msgs) != 3 || msgs[0].Seq != 3 || msgs[2].Seq != 5 {
		t.Fatalf("LoadRange(2, 6) = %+v, %v; want seqs 3..5", msgs, err)
	}
	if _, err := db.SaveSummary(ctx, s, agentcore.Summary{FromSeq: 0, ToSeq: 0, Text: "x"}); err == nil {
		t.Error("SaveSummary of an empty range succeeded")
	}

	if _, err := db.ResetScope(ctx, "telegram:42", "telegram:1"); err != nil {
		t.Fatal(err)
	}
	if got, err := db.Summary(ctx, s); err != nil || got.Text != "" || got.Floor != 6 {
		t.Fatalf("Summary after /reset = %+v, %v; want none, floor 6", got, err)
	}
	if msgs, err := db.LoadRange(ctx, s, 0, 100, 10); err != nil || len(msgs) != 0 {
		t.Fatalf("LoadRange after /reset = %+v, %v; want none", msgs, err)
	}
	// A summary of what the reset hid, finished after it, is not stored.
	if ok, err := db.SaveSummary(ctx, s, agentcore.Summary{FromSeq: 1, ToSeq: 6, Text: "late"}); err != nil || ok {
		t.Fatalf("SaveSummary of hidden turns = %v, %v; want not stored", ok, err)
	}
}
