package postgres_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func micros(n int64) *int64 { return &n }

// TestUsageSums: records are summed per grouping since a time, filtered,
// largest first and bounded; unpriced calls leave the cost unknown; an
// unknown grouping is refused.
func TestUsageSums(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	now := time.Now().UTC().Truncate(time.Second)
	old := now.Add(-48 * time.Hour)
	for _, r := range []usage.Record{
		{At: now, Identity: "telegram:1", Chat: "telegram:-5", Agent: "default", Model: "m1",
			Tokens: usage.Tokens{Input: 100, Output: 10, CacheRead: 50, CacheWrite: 5}, CostMicros: micros(300)},
		{At: now, Identity: "telegram:1", Chat: "telegram:-5", Agent: "ops", Model: "m2", Job: "daily",
			Tokens: usage.Tokens{Input: 20, Output: 2}},
		{At: now, Identity: "telegram:2", Chat: "telegram:-6", Agent: "default", Model: "m1",
			Tokens: usage.Tokens{Input: 1000, Output: 1}, CostMicros: micros(2000)},
		{At: old, Identity: "telegram:1", Chat: "telegram:-5", Agent: "default", Model: "m1",
			Tokens: usage.Tokens{Input: 99999}, CostMicros: micros(1)},
		{Identity: "telegram:3", Model: "m1", Tokens: usage.Tokens{Output: 1}}, // at the database's clock
	} {
		if err := db.InsertUsage(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	since := now.Add(-time.Hour)
	byID, err := db.SumUsage(ctx, usage.Query{GroupBy: usage.ByIdentity, Since: since})
	if err != nil {
		t.Fatal(err)
	}
	if len(byID) != 3 || byID[0].Key != "telegram:2" || byID[1].Key != "telegram:1" || byID[2].Key != "telegram:3" {
		t.Fatalf("by identity = %+v", byID)
	}
	one := byID[1]
	if one.Tokens != (usage.Tokens{Input: 120, Output: 12, CacheRead: 50, CacheWrite: 5}) || one.Calls != 2 ||
		one.PricedCalls != 1 || one.CostMicros != 300 {
		t.Errorf("telegram:1 = %+v", one)
	}
	if d := one.CostDollars(); d == nil || *d != 0.0003 {
		t.Errorf("telegram:1 cost = %v", d)
	}
	if byID[2].CostDollars() != nil {
		t.Errorf("an unpriced identity has cost %v", *byID[2].CostDollars())
	}

	jobs, err := db.SumUsage(ctx, usage.Query{GroupBy: usage.ByJob, Since: since, Job: "daily"})
	if err != nil || len(jobs) != 1 || jobs[0].Key != "daily" || jobs[0].Tokens.Input != 20 {
		t.Errorf("job daily = %+v, %v", jobs, err)
	}
	chat, err := db.SumUsage(ctx, usage.Query{Since: old, Chat: "telegram:-5"})
	if err != nil || len(chat) != 1 || chat[0].Key != "" || chat[0].Calls != 3 || chat[0].Tokens.Input != 100119 {
		t.Errorf("chat since two days = %+v, %v", chat, err)
	}
	window, err := db.SumUsage(ctx, usage.Query{Since: old, Until: since, Identity: "telegram:1"})
	if err != nil || window[0].Calls != 1 || window[0].Tokens.Input != 99999 {
		t.Errorf("window = %+v, %v", window, err)
	}
	none, err := db.SumUsage(ctx, usage.Query{Since: since, Identity: "telegram:404"})
	if err != nil || len(none) != 1 || none[0].Calls != 0 || none[0].CostDollars() != nil {
		t.Errorf("nobody's usage = %+v, %v", none, err)
	}
	top, err := db.SumUsage(ctx, usage.Query{GroupBy: usage.ByModel, Since: old, Limit: 1})
	if err != nil || len(top) != 1 || top[0].Key != "m1" {
		t.Errorf("top model = %+v, %v", top, err)
	}
	for _, bad := range []string{"session_key", "identity; DROP TABLE llm_usage", "cost"} {
		if _, err := db.SumUsage(ctx, usage.Query{GroupBy: bad, Since: since}); err == nil || !strings.Contains(err.Error(), "identity, chat, agent, model, job") {
			t.Errorf("group by %q: err = %v", bad, err)
		}
	}
}

// TestUsageRefusesNegatives: the table itself refuses negative counts, so
// a bug upstream cannot lower a total.
func TestUsageRefusesNegatives(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if err := db.InsertUsage(ctx, usage.Record{Tokens: usage.Tokens{Input: -5}}); err == nil {
		t.Fatal("a negative count was stored")
	}
	got, err := db.SumUsage(ctx, usage.Query{})
	if err != nil || got[0].Calls != 0 {
		t.Errorf("after the refused insert: %+v, %v", got, err)
	}
}
