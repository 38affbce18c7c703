package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// usageRow is one row of GET /api/v1/usage.
type usageRow struct {
	Key              string   `json:"key"`
	InputTokens      int64    `json:"input_tokens"`
	OutputTokens     int64    `json:"output_tokens"`
	CacheReadTokens  int64    `json:"cache_read_tokens"`
	CacheWriteTokens int64    `json:"cache_write_tokens"`
	CostDollars      *float64 `json:"cost_dollars"`
	Calls            int64    `json:"calls"`
}

func (r usageRow) all() int64 {
	return r.InputTokens + r.OutputTokens + r.CacheReadTokens + r.CacheWriteTokens
}

// thousands writes n as /usage does: 12345 → "12,345".
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// TestE2EUsage: two people talk to the agent in a group; /usage shows
// each their own tokens and cost and the chat's together, an admin also
// sees the top people, and the usage API and /metrics give the same
// figures; a bad group_by is refused.
func TestE2EUsage(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	dir := t.TempDir()
	writeConfig(t, dir, "llm:\n  prices: {\"test-model\": {input: 1.5, output: 6, cache_read: 0.375}}\n")
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_ADMINS"] = "telegram:77"
	env["SWITCHBOARD_HTTP_ADMIN_TOKEN"] = "e2e-usage-token"
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	const group = -1008880052
	say := func(user int64, text, want string) string {
		t.Helper()
		after := lastID(tg, group)
		tg.PushMessage(telegramtest.Incoming{ChatID: group, ChatType: "supergroup", UserID: user, UserName: "U", Text: text})
		return newReplyContaining(ctx, t, tg, group, after, want).Visible
	}
	ask := func(user int64, text string) {
		t.Helper()
		say(user, "@"+telegramtest.BotUsername+" "+text, "echo: "+text)
	}
	ask(78, "how are the deploys going this morning")
	ask(78, "and the database migrations")
	ask(79, "what is on the calendar")

	rows := usageAPI(t, d, "identity")
	byID := map[string]usageRow{}
	for _, r := range rows {
		byID[r.Key] = r
	}
	a, b := byID["telegram:78"], byID["telegram:79"]
	if a.Calls != 2 || b.Calls != 1 || a.InputTokens == 0 || a.OutputTokens == 0 || a.CostDollars == nil || b.CostDollars == nil {
		t.Fatalf("usage by identity = %+v", rows)
	}
	// The chat's later calls start with its earlier messages, which the
	// model fake's prompt cache serves.
	if a.CacheReadTokens == 0 || b.CacheReadTokens == 0 {
		t.Fatalf("usage by identity = %+v, want cache reads for both", rows)
	}
	wantCost := (float64(a.InputTokens)*1.5 + float64(a.OutputTokens)*6 + float64(a.CacheReadTokens)*0.375) / 1e6
	// Each call's cost is recorded in whole microdollars.
	if d, slack := *a.CostDollars-wantCost, 1e-6*float64(a.Calls)+1e-9; d > slack || d < -slack {
		t.Errorf("telegram:78 cost = %v, want %v", *a.CostDollars, wantCost)
	}
	mine := func(r usageRow) string {
		share := 100 * float64(r.CacheReadTokens) / float64(r.InputTokens+r.CacheReadTokens)
		return fmt.Sprintf("You, today (UTC): %s tokens (in %s, out %s, cache read %s, cache write 0) · %.0f%% of input from cache · $%.4f · %d call",
			thousands(r.all()), thousands(r.InputTokens), thousands(r.OutputTokens), thousands(r.CacheReadTokens), share, *r.CostDollars, r.Calls)
	}
	chat := fmt.Sprintf("This chat, today (UTC): %s tokens", thousands(a.all()+b.all()))

	got := say(78, "/usage", "You, today")
	for _, want := range []string{mine(a), chat} {
		if !strings.Contains(got, want) {
			t.Errorf("/usage of telegram:78 lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "Top today") {
		t.Errorf("a non-admin sees the top spenders:\n%s", got)
	}
	if got := say(79, "/usage", "You, today"); !strings.Contains(got, mine(b)) || !strings.Contains(got, chat) {
		t.Errorf("/usage of telegram:79 lacks %q:\n%s", mine(b), got)
	}
	admin := say(77, "/usage", "You, today")
	wantTop := fmt.Sprintf("people: telegram:78 %s tokens, $%.4f; telegram:79 %s tokens", thousands(a.all()), *a.CostDollars, thousands(b.all()))
	if !strings.Contains(admin, "You, today (UTC): nothing yet") || !strings.Contains(admin, wantTop) ||
		!strings.Contains(admin, "models: test-model") {
		t.Errorf("admin /usage lacks %q:\n%s", wantTop, admin)
	}

	_, metrics := d.get("/metrics")
	in := regexp.MustCompile(`(?m)^switchboard_llm_tokens_total\{agent="[a-z]+",model="test-model",kind="input"\} (\d+)$`).FindStringSubmatch(metrics)
	if in == nil || in[1] != strconv.FormatInt(a.InputTokens+b.InputTokens, 10) {
		t.Errorf("input tokens metric = %v, want %d", in, a.InputTokens+b.InputTokens)
	}
	if !strings.Contains(metrics, `switchboard_llm_cost_dollars_total{agent="`) {
		t.Errorf("/metrics lacks the cost counter")
	}
	if code, body := adminCall(t, d, "GET", "/api/v1/usage?group_by=session", "e2e-usage-token", ""); code != 400 ||
		!strings.Contains(body, "identity, chat, agent, model, job") {
		t.Errorf("bad group_by: %d %s", code, body)
	}
	if code, body := adminCall(t, d, "GET", "/api/v1/usage?group_by=chat&since=today", "e2e-usage-token", ""); code != 400 {
		t.Errorf("bad since: %d %s", code, body)
	}
}

// usageAPI returns GET /api/v1/usage?group_by=by since yesterday.
func usageAPI(t *testing.T, d *daemonProc, by string) []usageRow {
	t.Helper()
	since := time.Now().UTC().Add(-24 * time.Hour).Format(time.RFC3339)
	code, body := adminCall(t, d, "GET", "/api/v1/usage?group_by="+by+"&since="+since, "e2e-usage-token", "")
	var out struct{ Usage []usageRow }
	if err := json.Unmarshal([]byte(body), &out); code != 200 || err != nil {
		t.Fatalf("usage API: %d %s (%v)", code, body, err)
	}
	return out.Usage
}

// TestE2EJobUsage: a scheduled job's model calls are recorded for the
// job: /jobs shows its last runs' tokens and cost, and the usage API
// groups them under its name.
func TestE2EJobUsage(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	dir := t.TempDir()
	writeConfig(t, dir, `llm:
  prices: {"test-model": {input: 1, output: 1}}
jobs:
  - name: heartbeat
    schedule: "@every 1s"
    prompt: "SAY: tick from the scheduler"
    target: telegram:4243
`)
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_ADMINS"] = "telegram:77"
	env["SWITCHBOARD_HTTP_ADMIN_TOKEN"] = "e2e-usage-token"
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	if _, err := waitAnswers(ctx, tg, 4243, 1); err != nil {
		t.Fatalf("job replies: %v", err)
	}
	var job usageRow
	for _, r := range usageAPI(t, d, "job") {
		if r.Key == "heartbeat" {
			job = r
		}
	}
	if job.Calls == 0 || job.all() == 0 || job.CostDollars == nil {
		t.Fatalf("the job's usage = %+v", job)
	}
	after := lastID(tg, 77)
	tg.SendText(77, 77, "Ada", "/jobs")
	got := newReplyContaining(ctx, t, tg, 77, after, "heartbeat").Visible
	if !regexp.MustCompile(`heartbeat .*; last (run|\d+ runs): \d+ tokens, \$\d+\.\d{4}`).MatchString(got) {
		t.Errorf("/jobs = %q", got)
	}
}
