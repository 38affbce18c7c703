package usage_test

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/tools"
)

var prices = agentcore.Prices{"gpt-4.1": {Input: 2, Output: 8, CacheRead: 0.5, CacheWrite: 2.5}}

// chatCall is a model call of telegram:7 in chat -5 for agent default.
func chatCall(model string) agentcore.MeteredCall {
	session := "default/telegram:-5"
	return agentcore.MeteredCall{Session: session, Model: model,
		Call: tools.Call{Channel: "telegram", ChatID: "-5", UserID: "telegram:7", Session: session, Agent: "default"}}
}

// TestRecordAttributes: a call is recorded for its person, chat, agent,
// model and job (its own session's, or the one a subagent works for),
// with its cost in microdollars, or none when unpriced.
func TestRecordAttributes(t *testing.T) {
	ctx := context.Background()
	store := &memStore{}
	r := usage.NewRecorder(usage.Options{Store: store, Prices: prices})
	if err := r.Admit(ctx, chatCall("gpt-4.1")); err != nil {
		t.Fatalf("Admit = %v", err)
	}
	r.Record(ctx, chatCall("gpt-4.1-2025-04-14"), agentcore.Usage{InputTokens: 1000, OutputTokens: 100, CacheReadTokens: 2000, CacheWriteTokens: 400})
	r.Record(ctx, chatCall("unpriced"), agentcore.Usage{InputTokens: 5})
	jobSession := jobs.JobSession("ops", "daily")
	r.Record(ctx, agentcore.MeteredCall{Session: jobSession, Model: "gpt-4.1",
		Call: tools.Call{Channel: "slack", ChatID: "C1", UserID: "config", Session: jobSession, Agent: "ops"}}, agentcore.Usage{OutputTokens: 1})
	sub := "helper/" + tools.SubScope("ab12", jobSession)
	r.Record(ctx, agentcore.MeteredCall{Session: sub, Model: "gpt-4.1", Call: tools.Call{Session: sub}}, agentcore.Usage{InputTokens: 1})

	if len(store.records) != 4 {
		t.Fatalf("records = %+v", store.records)
	}
	first := store.records[0]
	if first.Identity != "telegram:7" || first.Chat != "telegram:-5" || first.Agent != "default" ||
		first.Model != "gpt-4.1-2025-04-14" || first.Job != "" || first.Session != "default/telegram:-5" || first.At.IsZero() {
		t.Errorf("chat call = %+v", first)
	}
	// 1000×2 + 100×8 + 2000×0.5 + 400×2.5 = 4800 per million tokens.
	if first.CostMicros == nil || *first.CostMicros != 4800 {
		t.Errorf("cost = %v, want 4800 microdollars", first.CostMicros)
	}
	if store.records[1].CostMicros != nil {
		t.Errorf("an unpriced model got a cost: %d", *store.records[1].CostMicros)
	}
	if job := store.records[2]; job.Job != "daily" || job.Chat != "slack:C1" || job.Agent != "ops" || job.Identity != "config" {
		t.Errorf("job call = %+v", job)
	}
	if subRec := store.records[3]; subRec.Job != "daily" || subRec.Agent != "helper" {
		t.Errorf("a subagent of the job = %+v", subRec)
	}
}

// TestRecordSurvivesCancel: a run stopped right after its model call
// still gets the call recorded.
func TestRecordSurvivesCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	store := &memStore{}
	usage.NewRecorder(usage.Options{Store: store}).Record(ctx, chatCall("m"), agentcore.Usage{InputTokens: 3})
	if len(store.records) != 1 || store.ctxErr != nil {
		t.Fatalf("records = %+v, insert context error = %v", store.records, store.ctxErr)
	}
}

// TestRecordBadFigures: negative counts are recorded as 0, absurd ones
// capped, each with a warning; totals and costs stay sane, and the
// largest int a provider could send does not overflow anything.
func TestRecordBadFigures(t *testing.T) {
	ctx := context.Background()
	store := &memStore{}
	var logs bytes.Buffer
	set := metrics.NewSet()
	r := usage.NewRecorder(usage.Options{Store: store, Prices: prices, Metrics: usage.NewMetrics(set),
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	r.Record(ctx, chatCall("gpt-4.1"), agentcore.Usage{InputTokens: -50, OutputTokens: math.MaxInt, CacheReadTokens: math.MinInt, CacheWriteTokens: 7})
	r.Record(ctx, chatCall("gpt-4.1"), agentcore.Usage{InputTokens: math.MaxInt, OutputTokens: math.MaxInt})

	got := store.records[0].Tokens
	if got != (usage.Tokens{Input: 0, Output: usage.MaxTokensPerCall, CacheRead: 0, CacheWrite: 7}) {
		t.Errorf("recorded = %+v", got)
	}
	if c := store.records[1].CostMicros; c == nil || *c != 100_000_000 {
		t.Errorf("capped call's cost = %v, want $100 (10M in × $2 + 10M out × $8)", c)
	}
	if n := strings.Count(logs.String(), "negative or absurd usage"); n != 2 {
		t.Errorf("%d warnings, want 2:\n%s", n, logs.String())
	}
	total, err := store.SumUsage(ctx, usage.Query{})
	if err != nil || total[0].Tokens.All() != 3*usage.MaxTokensPerCall+7 {
		t.Errorf("total = %+v, %v", total, err)
	}
	var out bytes.Buffer
	set.WritePrometheus(&out)
	for _, want := range []string{
		`switchboard_llm_tokens_total{agent="default",model="gpt-4.1",kind="output"} 20000000`,
		`switchboard_llm_tokens_total{agent="default",model="gpt-4.1",kind="input"} 10000000`,
		`switchboard_llm_tokens_total{agent="default",model="gpt-4.1",kind="cache_write"} 7`,
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("metrics lack %s:\n%s", want, out.String())
		}
	}
}

// TestRecordAbsurdPrice: a price that makes a cost absurd or not a number
// does not poison the sums: the cost is capped or left unknown.
func TestRecordAbsurdPrice(t *testing.T) {
	ctx := context.Background()
	store := &memStore{}
	r := usage.NewRecorder(usage.Options{Store: store, Prices: agentcore.Prices{
		"huge": {Input: 1e300}, "nan": {Input: math.NaN()}, "neg": {Input: -1},
	}})
	for _, m := range []string{"huge", "nan", "neg"} {
		r.Record(ctx, chatCall(m), agentcore.Usage{InputTokens: 1000})
	}
	if c := store.records[0].CostMicros; c == nil || *c != 1e12 {
		t.Errorf("absurd cost = %v, want capped at a million dollars", c)
	}
	for _, rec := range store.records[1:] {
		if rec.CostMicros != nil {
			t.Errorf("%s cost = %d, want unknown", rec.Model, *rec.CostMicros)
		}
	}
}

// TestRecordStoreDown: a failed write is logged and counted in the
// metrics; the call is not held up.
func TestRecordStoreDown(t *testing.T) {
	var logs bytes.Buffer
	set := metrics.NewSet()
	r := usage.NewRecorder(usage.Options{Store: &memStore{fail: errDown}, Metrics: usage.NewMetrics(set),
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), WriteTimeout: time.Second})
	r.Record(context.Background(), chatCall("m"), agentcore.Usage{InputTokens: 3})
	if !strings.Contains(logs.String(), "could not record") || !strings.Contains(logs.String(), "database down") {
		t.Errorf("log = %s", logs.String())
	}
	var out bytes.Buffer
	set.WritePrometheus(&out)
	if !strings.Contains(out.String(), `kind="input"} 3`) {
		t.Errorf("metrics = %s", out.String())
	}
}
