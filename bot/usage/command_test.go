package usage_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/channels"
)

// admins is a bot.Host whose admins are listed.
type admins []string

func (a admins) IsAdmin(id string) bool {
	for _, x := range a {
		if x == id {
			return true
		}
	}
	return false
}

func cost(n int64) *int64 { return &n }

// usageFixture is a store with usage of two people in two chats, today
// (Wednesday 2026-12-02), earlier this week and last month.
func usageFixture(now time.Time) *memStore {
	return &memStore{records: []usage.Record{
		{At: now.Add(-time.Hour), Identity: "telegram:1", Chat: "telegram:-5", Agent: "default", Model: "gpt-4.1",
			Tokens: usage.Tokens{Input: 1000, Output: 200, CacheRead: 3000, CacheWrite: 1000}, CostMicros: cost(12345)},
		{At: now.Add(-time.Hour), Identity: "telegram:2", Chat: "telegram:-5", Agent: "ops", Model: "local", Job: "daily",
			Tokens: usage.Tokens{Input: 50, Output: 5}},
		{At: now.Add(-48 * time.Hour), Identity: "telegram:1", Chat: "telegram:-6", Agent: "default", Model: "gpt-4.1",
			Tokens: usage.Tokens{Input: 10000}, CostMicros: cost(20000)},
		{At: now.AddDate(0, -1, 0), Identity: "telegram:1", Chat: "telegram:-5", Agent: "default", Model: "gpt-4.1",
			Tokens: usage.Tokens{Input: 777777}},
	}}
}

// TestUsageCommand: /usage shows the asker's and the chat's usage today
// in full (tokens, cost, cache share) and the week and month in brief;
// only admins see the top lists; a storage failure is said plainly.
func TestUsageCommand(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	store := usageFixture(now)
	r := usage.NewRecorder(usage.Options{Store: store, Now: func() time.Time { return now }})
	run := usage.Commands(r)[0].Run
	from := func(user string) channels.Inbound {
		return channels.Inbound{Platform: "telegram", ChatID: "-5", UserID: user}
	}
	host := admins{"telegram:9"}

	got := run(ctx, host, from("1"), "")
	for _, want := range []string{
		"You, today (UTC): 5,200 tokens (in 1,000, out 200, cache read 3,000, cache write 1,000) · 60% of input from cache · $0.0123 · 1 call",
		"this week: 15,200 tokens, $0.0323",
		"This chat, today (UTC): 5,255 tokens",
		"$0.0123 + 1 call without a price · 2 calls",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/usage lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Top") || strings.Contains(got, "777") {
		t.Errorf("a non-admin's /usage shows the top or last month:\n%s", got)
	}
	if got := run(ctx, host, from("2"), ""); !strings.Contains(got, "You, today (UTC): 55 tokens") ||
		!strings.Contains(got, "cost unknown") {
		t.Errorf("/usage of telegram:2:\n%s", got)
	}
	if got := run(ctx, host, from("3"), ""); !strings.Contains(got, "You, today (UTC): nothing yet") {
		t.Errorf("/usage of someone who used nothing:\n%s", got)
	}

	admin := run(ctx, host, from("9"), "")
	for _, want := range []string{
		"Top today:", "people: telegram:1 5,200 tokens, $0.0123; telegram:2 55 tokens",
		"agents: default 5,200", "models: gpt-4.1 5,200", "jobs: daily 55 tokens",
	} {
		if !strings.Contains(admin, want) {
			t.Errorf("admin /usage lacks %q:\n%s", want, admin)
		}
	}

	store.fail = errDown
	if got := run(ctx, host, from("1"), ""); got != "Could not read usage right now (storage unavailable). Try again in a minute." {
		t.Errorf("/usage with the store down = %q", got)
	}
}

// TestRows: the API rows carry each group's figures and a null cost when
// nothing in the group was priced; an unknown grouping is refused.
func TestRows(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 15, 0, 0, 0, time.UTC)
	r := usage.NewRecorder(usage.Options{Store: usageFixture(now), Now: func() time.Time { return now }})
	rows, err := r.Rows(ctx, usage.ByIdentity, now.Truncate(24*time.Hour))
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows = %+v, %v", rows, err)
	}
	if one := rows[0]; one.Key != "telegram:1" || one.InputTokens != 1000 || one.CacheReadTokens != 3000 ||
		one.CostDollars == nil || *one.CostDollars != 0.012345 || one.Calls != 1 {
		t.Errorf("telegram:1 = %+v", one)
	}
	if rows[1].CostDollars != nil {
		t.Errorf("unpriced row has a cost")
	}
	if _, err := r.Rows(ctx, "session_key", now.Truncate(24*time.Hour)); err == nil {
		t.Error("grouping by session_key was accepted")
	}
}
