package budgets_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/budgets"
	"github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
	"github.com/switchboard-chat/switchboard/tools"
)

const admin = "telegram:1"

// chatPipeline records what the Guard posts.
type chatPipeline struct {
	mu      sync.Mutex
	asked   []bot.OutboxMessage
	edited  []string
	answers []string
	sent    []bot.OutboxMessage
}

func (p *chatPipeline) AskDecision(_ context.Context, _ bot.DecisionMessages, m bot.OutboxMessage, _, _, _ string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.asked = append(p.asked, m)
}

func (p *chatPipeline) EditDecisions(_ context.Context, _ bot.DecisionMessages, _, _ string, text func(bot.DecisionMessage) string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.edited = append(p.edited, text(bot.DecisionMessage{Role: "approver"}))
}

func (p *chatPipeline) AnswerPress(_ context.Context, _ channels.Inbound, text string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.answers = append(p.answers, text)
}

func (p *chatPipeline) Send(_ context.Context, m bot.OutboxMessage) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.sent = append(p.sent, m)
}

// fixture is a Guard on real PostgreSQL and Redis.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	db     *postgres.DB
	prices agentcore.Prices
	rdb    *sbredis.Store
	guard  *budgets.Guard
	chat   *chatPipeline
}

func newFixture(t *testing.T, list []budgets.Budget, prices agentcore.Prices) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	f := &fixture{t: t, ctx: ctx, db: pgtest.Open(t, ctx), prices: prices, chat: &chatPipeline{}}
	rdb, err := sbredis.Open(ctx, redistest.URL(t), sbredis.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	f.rdb = rdb
	f.guard = f.newGuard(list, prices, rdb)
	return f
}

// newGuard is another Guard (another replica) on the fixture's stores;
// totals nil sums PostgreSQL alone.
func (f *fixture) newGuard(list []budgets.Budget, prices agentcore.Prices, totals budgets.Totals) *budgets.Guard {
	o := budgets.Options{Budgets: list, Prices: prices, Store: f.db, Messages: f.db, Admins: []string{admin}}
	if totals != nil {
		o.Totals = totals
	}
	g := budgets.New(o)
	g.Attach(f.chat)
	return g
}

// call is a model call by user in chat telegram:-5.
func call(user string) agentcore.MeteredCall {
	return agentcore.MeteredCall{Session: "main/telegram:-5", Model: "m",
		Call: tools.Call{Channel: "telegram", ChatID: "-5", UserID: user, Agent: "main", Session: "main/telegram:-5"}}
}

// spend does what the daemon's agentcore.Meters{recorder, guard} does
// after a call: the usage record first (bot/usage), then the Guard's
// running total.
func (f *fixture) spend(g *budgets.Guard, c agentcore.MeteredCall, u agentcore.Usage) {
	f.t.Helper()
	rec := usage.NewRecorder(usage.Options{Store: f.db, Prices: f.prices})
	agentcore.Meters{rec, g}.Record(f.ctx, c, u)
}

// refused returns the refusal's reply, "" when the call is admitted.
func (f *fixture) refused(g *budgets.Guard, c agentcore.MeteredCall) string {
	f.t.Helper()
	err := g.Admit(f.ctx, c)
	var r *agentcore.RefusedError
	if errors.As(err, &r) {
		return r.Reply
	}
	if err != nil {
		f.t.Fatalf("Admit: %v", err)
	}
	return ""
}

// flush deletes the running totals, as a Redis restart without
// persistence would.
func (f *fixture) flush() {
	f.t.Helper()
	c := f.rdb.Client()
	keys, err := c.Keys(f.ctx, f.rdb.Prefix()+"budget:*").Result()
	if err != nil {
		f.t.Fatal(err)
	}
	if len(keys) > 0 {
		if err := c.Del(f.ctx, keys...).Err(); err != nil {
			f.t.Fatal(err)
		}
	}
}

func userDay(limit int64) []budgets.Budget {
	return []budgets.Budget{{Scope: "user", Per: "day", Limit: limit}}
}

// TestGuardRefusesAUserOverBudget: calls are admitted until the user's
// use reaches the limit; then refused with which budget, the use, the
// limit and the reset time; the admins are asked once; another user is
// not affected.
func TestGuardRefusesAUserOverBudget(t *testing.T) {
	f := newFixture(t, userDay(100), nil)
	alice, bob := call("telegram:42"), call("telegram:43")
	for range 2 {
		if r := f.refused(f.guard, alice); r != "" {
			t.Fatalf("refused under the limit: %s", r)
		}
		f.spend(f.guard, alice, agentcore.Usage{InputTokens: 30, OutputTokens: 10, CacheReadTokens: 5, CacheWriteTokens: 5})
	}
	reply := f.refused(f.guard, alice)
	end := time.Now().UTC().Truncate(24 * time.Hour).Add(24 * time.Hour)
	for _, want := range []string{"per-user daily budget of 100 tokens", "100 tokens used of 100 tokens", "resets at " + end.Format("2006-01-02 15:04 UTC"), "asked an admin"} {
		if !strings.Contains(reply, want) {
			t.Errorf("refusal %q does not say %q", reply, want)
		}
	}
	if f.refused(f.guard, alice) == "" {
		t.Fatal("the second call over budget was admitted")
	}
	if len(f.chat.asked) != 1 {
		t.Fatalf("admins asked %d times, want once", len(f.chat.asked))
	}
	ask := f.chat.asked[0]
	if ask.To.String() != "telegram:1" || !strings.Contains(ask.Text, "telegram:42") || len(ask.Buttons) != 1 ||
		ask.Buttons[0][0].Label != "Allow once more" || ask.Buttons[0][1].Label != "Keep limit" {
		t.Errorf("admin message = %+v", ask)
	}
	if r := f.refused(f.guard, bob); r != "" {
		t.Errorf("another user was refused: %s", r)
	}
	// A second replica, with its own Guard, refuses too and asks nobody.
	if f.refused(f.newGuard(userDay(100), nil, f.rdb), alice) == "" || len(f.chat.asked) != 1 {
		t.Errorf("second replica: asked %d times", len(f.chat.asked))
	}
}

// TestGuardDollarBudget: a dollar budget counts the cost at llm.prices.
func TestGuardDollarBudget(t *testing.T) {
	prices := agentcore.Prices{"m": {Input: 10, Output: 10}}                            // $10 per million: 1 token = 10 µ$
	list := []budgets.Budget{{Scope: "chat", Per: "month", Limit: 1000, Dollars: true}} // $0.001
	f := newFixture(t, list, prices)
	c := call("telegram:42")
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 50, OutputTokens: 10})
	if r := f.refused(f.guard, c); r != "" {
		t.Fatalf("refused at $0.0006 of $0.001: %s", r)
	}
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 50, OutputTokens: 10})
	reply := f.refused(f.guard, c)
	if !strings.Contains(reply, "per-chat monthly budget of $0.00") || !strings.Contains(reply, "this month") {
		t.Errorf("refusal = %q", reply)
	}
	// Another user in the same chat shares the chat's budget.
	if f.refused(f.guard, call("telegram:43")) == "" {
		t.Error("the chat budget did not hold for another user in the chat")
	}
}

// TestGuardNegativeUsageNeverReducesTheTotal: a model reporting negative
// tokens does not buy room.
func TestGuardNegativeUsageNeverReducesTheTotal(t *testing.T) {
	f := newFixture(t, userDay(100), nil)
	c := call("telegram:42")
	f.refused(f.guard, c) // seeds the total
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 100})
	f.spend(f.guard, c, agentcore.Usage{InputTokens: -1_000_000, OutputTokens: -5})
	if r := f.refused(f.guard, c); !strings.Contains(r, "100 tokens used of 100 tokens") {
		t.Errorf("after negative usage: %q, want still refused at 100", r)
	}
}

// TestGuardRecordsAfterTheRunEnded: a run stopped right after its model
// call still spent the tokens; Record counts them on a cancelled context.
func TestGuardRecordsAfterTheRunEnded(t *testing.T) {
	f := newFixture(t, userDay(100), nil)
	c := call("telegram:42")
	f.refused(f.guard, c)
	ctx, cancel := context.WithCancel(f.ctx)
	cancel()
	f.guard.Record(ctx, c, agentcore.Usage{InputTokens: 100})
	if r := f.refused(f.guard, c); !strings.Contains(r, "100 tokens used") {
		t.Errorf("after a Record on a cancelled context: %q", r)
	}
}

// TestGuardOverrides: only an admin decides; Allow once more gives one
// more period's limit for this period; pressing it again changes nothing
// and is answered so; the admins' message says who decided; the chat is
// told.
func TestGuardOverrides(t *testing.T) {
	f := newFixture(t, userDay(100), nil)
	c := call("telegram:42")
	f.refused(f.guard, c)
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 100})
	if f.refused(f.guard, c) == "" {
		t.Fatal("not refused at the limit")
	}
	data := f.chat.asked[0].Buttons[0][0].Data
	kind, rest, _ := strings.Cut(data, ":")
	id, choice, _ := strings.Cut(rest, ":")
	if kind != budgets.ButtonKind || choice != "a" {
		t.Fatalf("button data %q", data)
	}
	press := func(who string) string {
		platform, user, _ := strings.Cut(who, ":")
		f.guard.Decide(f.ctx, channels.Inbound{Platform: platform, UserID: user, ChatID: user}, id, choice)
		return f.chat.answers[len(f.chat.answers)-1]
	}
	if got := press("telegram:42"); !strings.Contains(got, "You may not decide this") {
		t.Errorf("non-admin press answered %q", got)
	}
	if f.refused(f.guard, c) == "" {
		t.Fatal("a non-admin's press raised the budget")
	}
	if got := press(admin); got != "Done: allowed once more by telegram:1." {
		t.Errorf("admin press answered %q", got)
	}
	if r := f.refused(f.guard, c); r != "" {
		t.Fatalf("refused after Allow once more: %s", r)
	}
	if got := press(admin); got != "Already decided: allowed once more by telegram:1." {
		t.Errorf("second press answered %q", got)
	}
	if len(f.chat.edited) != 1 || !strings.Contains(f.chat.edited[0], "Allowed once more by telegram:1") {
		t.Errorf("edited = %q", f.chat.edited)
	}
	if len(f.chat.sent) != 1 || f.chat.sent[0].To.String() != "telegram:-5" {
		t.Errorf("chat told: %+v", f.chat.sent)
	}
	// The raise is one more period's limit, no more, and pressing twice
	// did not add a third.
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 100})
	reply := f.refused(f.guard, c)
	if !strings.Contains(reply, "200 tokens used of 200 tokens") || !strings.Contains(reply, "already allowed") {
		t.Errorf("refusal after the raise is used = %q", reply)
	}
	if len(f.chat.asked) != 1 {
		t.Errorf("admins asked %d times in one period", len(f.chat.asked))
	}
	// A forged choice or id changes nothing.
	f.guard.Decide(f.ctx, channels.Inbound{Platform: "telegram", UserID: "1"}, id, "z")
	f.guard.Decide(f.ctx, channels.Inbound{Platform: "telegram", UserID: "1"}, "aaaaaaaaaaaaaaaaaaaa", "a")
	if got := f.chat.answers[len(f.chat.answers)-2:]; got[0] != "This button is no longer active." || got[1] != "This request no longer exists." {
		t.Errorf("forged presses answered %q", got)
	}
}

// TestGuardKeepLimitWins: Keep limit decided first, a later Allow once
// more changes nothing.
func TestGuardKeepLimitWins(t *testing.T) {
	f := newFixture(t, userDay(10), nil)
	c := call("telegram:42")
	f.refused(f.guard, c)
	f.spend(f.guard, c, agentcore.Usage{OutputTokens: 10})
	f.refused(f.guard, c)
	keep := f.chat.asked[0].Buttons[0][1].Data
	_, rest, _ := strings.Cut(keep, ":")
	id, _, _ := strings.Cut(rest, ":")
	in := channels.Inbound{Platform: "telegram", UserID: "1"}
	f.guard.Decide(f.ctx, in, id, "k")
	f.guard.Decide(f.ctx, in, id, "a")
	if got := f.chat.answers; len(got) != 2 || got[0] != "Done: limit kept by telegram:1." || got[1] != "Already decided: limit kept by telegram:1." {
		t.Errorf("answers = %q", got)
	}
	if r := f.refused(f.guard, c); !strings.Contains(r, "An admin kept the limit") {
		t.Errorf("refusal after Keep limit = %q", r)
	}
	if len(f.chat.sent) != 0 {
		t.Errorf("the chat was told of a raise: %+v", f.chat.sent)
	}
}

// TestGuardRedisFlushedMidPeriod: the running total is rebuilt from the
// usage records, so the budget still holds, and no call is counted twice.
func TestGuardRedisFlushedMidPeriod(t *testing.T) {
	f := newFixture(t, userDay(100), nil)
	c := call("telegram:42")
	f.refused(f.guard, c)
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 60})
	f.flush()
	// Recorded while the total is missing: PostgreSQL has it, Redis not.
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 30})
	if r := f.refused(f.guard, c); r != "" {
		t.Fatalf("90 of 100 refused (counted twice?): %s", r)
	}
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 10})
	f.flush()
	reply := f.refused(f.guard, c)
	if !strings.Contains(reply, "100 tokens used of 100 tokens") {
		t.Errorf("after a flush: %q, want refused at exactly 100", reply)
	}
}

// TestGuardRedisDown: with Redis unreachable the Guard sums PostgreSQL,
// so the budget still holds.
func TestGuardRedisDown(t *testing.T) {
	f := newFixture(t, userDay(100), nil)
	c := call("telegram:42")
	f.spend(f.guard, c, agentcore.Usage{InputTokens: 120})
	down, err := sbredis.Open(f.ctx, "redis://127.0.0.1:1/0", sbredis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = down.Close() })
	g := f.newGuard(userDay(100), nil, down)
	if r := f.refused(g, c); !strings.Contains(r, "120 tokens used of 100 tokens") {
		t.Errorf("with Redis down: %q", r)
	}
	g.Record(f.ctx, c, agentcore.Usage{InputTokens: 5}) // must not fail or block
	if r := f.refused(g, call("telegram:43")); r != "" {
		t.Errorf("another user refused with Redis down: %s", r)
	}
}
