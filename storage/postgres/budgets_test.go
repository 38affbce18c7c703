package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/budgets"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestUsedSince sums llm_usage per scope since a time: tokens of every
// kind, or microdollars (a call without a price counts nothing).
func TestUsedSince(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	since := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	for _, r := range []struct {
		at                    time.Time
		identity, chat, agent string
		job                   string
		cost                  *int64
	}{
		{since.Add(time.Hour), "telegram:1", "telegram:-5", "a", "", ptr(int64(1000))},
		{since.Add(2 * time.Hour), "telegram:1", "telegram:-6", "b", "daily", nil},
		{since.Add(-time.Hour), "telegram:1", "telegram:-5", "a", "", ptr(int64(9000))}, // before the period
		{since.Add(3 * time.Hour), "telegram:2", "telegram:-5", "a", "daily", ptr(int64(500))},
	} {
		if _, err := db.Pool().Exec(ctx, `INSERT INTO llm_usage (at, identity, chat, agent, job, model,
				input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost_microdollars)
			VALUES ($1, $2, $3, $4, $5, 'm', 10, 20, 30, 40, $6)`, r.at, r.identity, r.chat, r.agent, r.job, r.cost); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		scope, subject string
		dollars        bool
		want           int64
	}{
		{"user", "telegram:1", false, 200},
		{"user", "telegram:1", true, 1000},
		{"chat", "telegram:-5", false, 200},
		{"agent", "b", false, 100},
		{"job", "daily", true, 500},
		{"all", "all", false, 300},
		{"user", "telegram:3", false, 0},
	} {
		got, err := db.UsedSince(ctx, tc.scope, tc.subject, tc.dollars, since)
		if err != nil || got != tc.want {
			t.Errorf("UsedSince(%s %s, dollars=%v) = %d, %v; want %d", tc.scope, tc.subject, tc.dollars, got, err, tc.want)
		}
	}
	if _, err := db.UsedSince(ctx, "identity; DROP TABLE llm_usage", "x", false, since); err == nil {
		t.Error("an unknown scope was summed")
	}
}

func ptr[T any](v T) *T { return &v }

// TestBudgetOverrides: one override per budget, subject and period (a
// second open returns the first); of concurrent decisions exactly one wins;
// both the request and the decision are audited.
func TestBudgetOverrides(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	start := time.Date(2026, 5, 4, 0, 0, 0, 0, time.UTC)
	o := budgets.Override{ID: bot.NewID(), Budget: "user/day/tokens", Subject: "telegram:1", PeriodStart: start,
		PeriodEnd: start.Add(24 * time.Hour), Used: 120, Limit: 100, Chat: channels.Address{Platform: "telegram", ChatID: "-5", ThreadID: "7"}}
	got, created, err := db.OpenOverride(ctx, o)
	if err != nil || !created || got.Status != budgets.StatusPending || got.Chat != o.Chat || !got.PeriodStart.Equal(start) {
		t.Fatalf("open = %+v, %v, %v", got, created, err)
	}
	again := o
	again.ID = bot.NewID()
	if got2, created, err := db.OpenOverride(ctx, again); err != nil || created || got2.ID != o.ID {
		t.Fatalf("second open = %s, %v, %v; want the first (%s)", got2.ID, created, err, o.ID)
	}
	if _, ok, err := db.OverrideFor(ctx, o.Budget, o.Subject, start.Add(24*time.Hour)); err != nil || ok {
		t.Fatalf("override of the next period: ok=%v, %v", ok, err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins []string
	)
	for _, by := range []string{"telegram:10", "telegram:11", "telegram:12"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			status := budgets.StatusAllowed
			if by == "telegram:12" {
				status = budgets.StatusKept
			}
			if _, changed, err := db.DecideOverride(ctx, o.ID, status, by); err != nil {
				t.Error(err)
			} else if changed {
				mu.Lock()
				wins = append(wins, by)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(wins) != 1 {
		t.Fatalf("winners = %v, want exactly one", wins)
	}
	cur, ok, err := db.OverrideFor(ctx, o.Budget, o.Subject, start)
	if err != nil || !ok || cur.DecidedBy != wins[0] || cur.Status == budgets.StatusPending {
		t.Fatalf("after decisions = %+v, %v, %v", cur, ok, err)
	}
	if _, changed, err := db.DecideOverride(ctx, o.ID, budgets.StatusAllowed, "telegram:13"); err != nil || changed {
		t.Errorf("a later decision: changed=%v, %v", changed, err)
	}
	if _, _, err := db.DecideOverride(ctx, "nope", budgets.StatusAllowed, "telegram:10"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
	if _, _, err := db.DecideOverride(ctx, o.ID, "pending", "telegram:10"); err == nil {
		t.Error("a decision to pending was accepted")
	}
	entries, err := db.Audit(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var actions []string
	for _, e := range entries {
		if e.SubjectKind == budgets.Kind && e.SubjectID == o.ID {
			actions = append(actions, e.Actor+" "+e.Action)
		}
	}
	if len(actions) != 2 || actions[0] != wins[0]+" "+postgres.ActionBudgetDecided || actions[1] != "system "+postgres.ActionBudgetExceeded {
		t.Errorf("audit = %v", actions)
	}
}
