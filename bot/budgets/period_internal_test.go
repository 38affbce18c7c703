package budgets

import (
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/tools"
)

func TestPeriodBoundsAreUTCCalendarOnes(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		per, at, start, end string
	}{
		{"day", "2026-12-02T23:59:59+05:00", "2026-12-02T00:00:00Z", "2026-12-03T00:00:00Z"},
		{"day", "2026-12-02T20:00:00-05:00", "2026-12-03T00:00:00Z", "2026-12-04T00:00:00Z"},
		{"week", "2026-12-06T12:00:00Z", "2026-11-30T00:00:00Z", "2026-12-07T00:00:00Z"}, // a Sunday: the week began on Monday
		{"week", "2026-11-30T00:00:00Z", "2026-11-30T00:00:00Z", "2026-12-07T00:00:00Z"}, // Monday midnight begins it
		{"month", "2026-12-31T23:00:00Z", "2026-12-01T00:00:00Z", "2027-01-01T00:00:00Z"},
		{"month", "2028-02-29T10:00:00Z", "2028-02-01T00:00:00Z", "2028-03-01T00:00:00Z"},
	} {
		start, end := period(tc.per, at(tc.at))
		if !start.Equal(at(tc.start)) || !end.Equal(at(tc.end)) || start.Location() != time.UTC {
			t.Errorf("period(%s, %s) = %s … %s; want %s … %s", tc.per, tc.at, start, end, tc.start, tc.end)
		}
	}
}

func TestSubjectOfEachScope(t *testing.T) {
	chat := agentcore.MeteredCall{Session: "ops/telegram:-5", Call: tools.Call{Channel: "telegram", ChatID: "-5", UserID: "telegram:42", Agent: "ops"}}
	job := agentcore.MeteredCall{Session: "ops/job:daily-report", Call: tools.Call{Agent: "ops", Channel: "telegram", ChatID: "-5"}}
	for _, tc := range []struct {
		scope string
		c     agentcore.MeteredCall
		want  string
	}{
		{"user", chat, "telegram:42"},
		{"user", job, ""}, // a job's run has no person
		{"chat", chat, "telegram:-5"},
		{"agent", chat, "ops"},
		{"agent", agentcore.MeteredCall{Session: "scout/telegram:1"}, "scout"},
		{"job", chat, ""},
		{"job", job, "daily-report"},
		{"job", agentcore.MeteredCall{Session: "helper/sub:abc:ops/job:daily-report"}, "daily-report"}, // a subagent working for the job
		{"all", job, "all"},
	} {
		got, ok := Budget{Scope: tc.scope}.subject(tc.c)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("%s subject of %s = %q, %v; want %q", tc.scope, tc.c.Session, got, ok, tc.want)
		}
	}
}

func TestAmountCountsEveryKindAndNeverLess(t *testing.T) {
	prices := agentcore.Prices{"m": {Input: 1, Output: 2, CacheRead: 0.5, CacheWrite: 1}}
	u := agentcore.Usage{InputTokens: 1000, OutputTokens: 500, CacheReadTokens: 2000, CacheWriteTokens: 100}
	if got := (Budget{}).amount(prices, "m", u); got != 3600 {
		t.Errorf("tokens = %d, want 3600", got)
	}
	// $ per million: 1000×1 + 500×2 + 2000×0.5 + 100×1 = 3100 micro-dollars.
	if got := (Budget{Dollars: true}).amount(prices, "m", u); got != 3100 {
		t.Errorf("microdollars = %d, want 3100", got)
	}
	if got := (Budget{Dollars: true}).amount(prices, "unpriced", u); got != 0 {
		t.Errorf("an unpriced model cost %d", got)
	}
	neg := agentcore.Usage{InputTokens: -5000, OutputTokens: 10}
	if got := (Budget{}).amount(prices, "m", neg); got != 10 {
		t.Errorf("negative figures: %d, want 10 (the negative counts nothing)", got)
	}
	if got := (Budget{Dollars: true}).amount(prices, "m", agentcore.Usage{InputTokens: -1_000_000}); got != 0 {
		t.Errorf("a negative cost: %d", got)
	}
	if got := (Budget{}).amount(prices, "m", agentcore.Usage{InputTokens: 1 << 50}); got != 10_000_000 {
		t.Errorf("an absurd figure counts %d, want capped at 10000000 as the usage records are", got)
	}
}
