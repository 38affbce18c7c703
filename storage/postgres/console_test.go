package postgres_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/bot/console"
	"github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func hashOf(s string) []byte { h := sha256.Sum256([]byte(s)); return h[:] }

// TestConsoleLoginLinkOnce: a link is used once, even by two replicas at
// the same moment; an expired or unknown link is refused the same way.
func TestConsoleLoginLinkOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if err := db.CreateLoginLink(ctx, hashOf("tok-1"), "telegram:42", 10*time.Minute); err != nil {
		t.Fatal(err)
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins []string
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := db.UseLoginLink(ctx, hashOf("tok-1"))
			if err == nil {
				mu.Lock()
				wins = append(wins, id)
				mu.Unlock()
			} else if !errors.Is(err, console.ErrInvalidLink) {
				t.Errorf("use: %v", err)
			}
		}()
	}
	wg.Wait()
	if len(wins) != 1 || wins[0] != "telegram:42" {
		t.Fatalf("the link logged in %v, want telegram:42 once", wins)
	}
	if err := db.CreateLoginLink(ctx, hashOf("tok-2"), "telegram:42", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond) // the link's own lifetime, not synchronisation
	for _, tok := range []string{"tok-2", "tok-3", "tok-1"} {
		if _, err := db.UseLoginLink(ctx, hashOf(tok)); !errors.Is(err, console.ErrInvalidLink) {
			t.Errorf("%s: %v, want ErrInvalidLink", tok, err)
		}
	}
}

// TestConsoleSessions: a session lives while used, ends when idle too
// long, past its lifetime, or when its admin logs out everywhere; every
// login and logout is audited.
func TestConsoleSessions(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	mk := func(id, who string, idle, life time.Duration) {
		t.Helper()
		if err := db.CreateSession(ctx, console.NewSession{IDHash: hashOf(id), Identity: who, CSRF: "csrf-" + id,
			Idle: idle, Lifetime: life, Via: "link"}); err != nil {
			t.Fatal(err)
		}
	}
	mk("a", "telegram:42", time.Hour, 2*time.Hour)
	mk("b", "telegram:42", time.Hour, 2*time.Hour)
	mk("c", "telegram:7", time.Hour, 2*time.Hour)
	mk("idle", "telegram:7", time.Millisecond, time.Hour)
	mk("old", "telegram:7", time.Hour, time.Millisecond)
	s, err := db.Session(ctx, hashOf("a"), time.Hour, true)
	if err != nil || s.Identity != "telegram:42" || s.CSRF != "csrf-a" {
		t.Fatalf("session a = %+v, %v", s, err)
	}
	time.Sleep(5 * time.Millisecond) // the short sessions' own lifetimes
	for _, id := range []string{"idle", "old", "nope"} {
		if _, err := db.Session(ctx, hashOf(id), time.Hour, false); !errors.Is(err, console.ErrNoSession) {
			t.Errorf("session %s: %v, want ErrNoSession", id, err)
		}
	}
	n, err := db.EndSessions(ctx, "telegram:42", "telegram:42")
	if err != nil || n != 2 {
		t.Fatalf("EndSessions = %d, %v; want 2", n, err)
	}
	for _, id := range []string{"a", "b"} {
		if _, err := db.Session(ctx, hashOf(id), time.Hour, true); !errors.Is(err, console.ErrNoSession) {
			t.Errorf("session %s after logout: %v", id, err)
		}
	}
	if _, err := db.Session(ctx, hashOf("c"), time.Hour, true); err != nil {
		t.Errorf("another admin's session ended too: %v", err)
	}
	if err := db.EndSession(ctx, hashOf("c"), "telegram:7"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Session(ctx, hashOf("c"), time.Hour, false); !errors.Is(err, console.ErrNoSession) {
		t.Errorf("session c after its logout: %v", err)
	}
	logins, _ := db.AuditPage(ctx, console.AuditFilter{Action: console.ActionLogin, Limit: 10})
	logouts, _ := db.AuditPage(ctx, console.AuditFilter{Action: console.ActionLogout, Limit: 10})
	if len(logins) != 5 || len(logouts) != 2 {
		t.Errorf("audited %d logins and %d logouts, want 5 and 2", len(logins), len(logouts))
	}
}

// TestConsoleAuditPage: filters by actor, action (exact or a prefix
// ending in a dot, with no wildcards), time, and pages back by id.
func TestConsoleAuditPage(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for i, who := range []string{"telegram:1", "telegram:2", "telegram:1", "telegram:1"} {
		err := db.CreateSession(ctx, console.NewSession{IDHash: hashOf(string(rune('a' + i))), Identity: who, CSRF: "x",
			Idle: time.Hour, Lifetime: time.Hour, Via: "link"})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.EndSessions(ctx, "telegram:2", "telegram:2"); err != nil {
		t.Fatal(err)
	}
	get := func(f console.AuditFilter) []console.AuditEntry {
		t.Helper()
		if f.Limit == 0 {
			f.Limit = 50
		}
		out, err := db.AuditPage(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	if n := len(get(console.AuditFilter{Actor: "telegram:1"})); n != 3 {
		t.Errorf("actor filter: %d entries, want 3", n)
	}
	if n := len(get(console.AuditFilter{Action: "console."})); n != 5 {
		t.Errorf("prefix console.: %d entries, want 5", n)
	}
	for _, a := range []string{"console", "%", "console.%", "_onsole."} {
		if n := len(get(console.AuditFilter{Action: a})); n != 0 {
			t.Errorf("action %q matched %d entries, want 0", a, n)
		}
	}
	if n := len(get(console.AuditFilter{Since: time.Now().Add(time.Hour)})); n != 0 {
		t.Errorf("since the future: %d entries", n)
	}
	if n := len(get(console.AuditFilter{Until: time.Now().Add(-time.Hour)})); n != 0 {
		t.Errorf("until an hour ago: %d entries", n)
	}
	first := get(console.AuditFilter{Limit: 2})
	rest := get(console.AuditFilter{Before: first[1].ID})
	if len(first) != 2 || len(rest) != 3 || rest[0].ID >= first[1].ID || first[0].Action != console.ActionLogout {
		t.Errorf("pages %+v then %+v", first, rest)
	}
	if first[0].Detail["sessions"] != float64(1) || first[0].SubjectKind != postgres.SubjectConsoleSession {
		t.Errorf("logout entry = %+v", first[0])
	}
}

// TestConsoleUsageByDay: sums per UTC day and key, cost of the priced
// calls with the unpriced ones counted apart; only the offered groupings
// are accepted.
func TestConsoleUsageByDay(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	day1 := time.Date(2026, 11, 30, 23, 30, 0, 0, time.UTC)
	day2 := time.Date(2026, 12, 1, 0, 30, 0, 0, time.UTC)
	price := int64(1500)
	for _, r := range []usage.Record{
		{At: day1, Agent: "ops", Model: "m1", Identity: "telegram:1", Tokens: usage.Tokens{Input: 10, Output: 5}, CostMicros: &price},
		{At: day1.Add(10 * time.Minute), Agent: "ops", Model: "m2", Identity: "telegram:2", Tokens: usage.Tokens{Input: 1, CacheRead: 2}},
		{At: day2, Agent: "ops", Model: "m1", Identity: "telegram:1", Tokens: usage.Tokens{Output: 7}, CostMicros: &price},
		{At: day2, Agent: "dev", Model: "m1", Identity: "telegram:1", Tokens: usage.Tokens{Output: 1}, CostMicros: &price},
	} {
		if err := db.InsertUsage(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := db.UsageByDay(ctx, console.UsageByAgent, day1.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	want := []console.UsageDay{
		{Day: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC), Key: "ops", Tokens: 18, CostMicros: 1500, Unpriced: 1},
		{Day: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Key: "dev", Tokens: 1, CostMicros: 1500},
		{Day: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Key: "ops", Tokens: 7, CostMicros: 1500},
	}
	if len(got) != len(want) {
		t.Fatalf("by agent = %+v", got)
	}
	for i := range want {
		if !got[i].Day.Equal(want[i].Day) || got[i].Key != want[i].Key || got[i].Tokens != want[i].Tokens ||
			got[i].CostMicros != want[i].CostMicros || got[i].Unpriced != want[i].Unpriced {
			t.Errorf("row %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got, _ := db.UsageByDay(ctx, console.UsageByModel, day2); len(got) != 1 || got[0].Key != "m1" || got[0].Tokens != 8 {
		t.Errorf("by model since day 2 = %+v", got)
	}
	if _, err := db.UsageByDay(ctx, "session_key; DROP TABLE llm_usage", day1); err == nil {
		t.Error("an unknown grouping was accepted")
	}
}

// TestConsoleAllowedIdentities: those allowed at run time are listed,
// newest first; a revoked one is not.
func TestConsoleAllowedIdentities(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for _, id := range []string{"telegram:1", "telegram:2", "telegram:3"} {
		if err := db.Allow(ctx, id, "name "+id, "telegram:42"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Revoke(ctx, "telegram:2", "telegram:42"); err != nil {
		t.Fatal(err)
	}
	got, err := db.AllowedIdentities(ctx)
	if err != nil || len(got) != 2 || got[0].Identity != "telegram:3" || got[1].Identity != "telegram:1" ||
		got[0].DisplayName != "name telegram:3" || got[0].AllowedBy != "telegram:42" {
		t.Fatalf("allowed = %+v, %v", got, err)
	}
}

// TestConsoleConversations: sessions by recency, found by a substring of
// their key, agent or chat (no wildcards); a conversation's messages page
// back by seq, tool calls decoded; its approvals listed.
func TestConsoleConversations(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if _, err := db.Append(ctx, "ops/telegram:-100", user("first")); err != nil {
		t.Fatal(err)
	}
	call := agentcore.Message{Role: agentcore.RoleAssistant, ToolCalls: []agentcore.ToolCall{{ID: "c1", Name: "exec", Arguments: json.RawMessage(`{"command":"ls"}`)}}}
	if _, err := db.Append(ctx, "dev/telegram:7", user("a"), call, answer("b")); err != nil {
		t.Fatal(err)
	}
	all, err := db.Conversations(ctx, "", 10)
	if err != nil || len(all) != 2 || all[0].Key != "dev/telegram:7" || all[0].Messages != 3 {
		t.Fatalf("conversations = %+v, %v", all, err)
	}
	for search, want := range map[string]int{"TELEGRAM:-100": 1, "dev": 1, "telegram": 2, "%": 0, "_": 0} {
		if got, _ := db.Conversations(ctx, search, 10); len(got) != want {
			t.Errorf("search %q found %d, want %d", search, len(got), want)
		}
	}
	msgs, err := db.ConversationMessages(ctx, "dev/telegram:7", 0, 2)
	if err != nil || len(msgs) != 2 || msgs[0].Seq != 2 || len(msgs[0].ToolCalls) != 1 ||
		msgs[0].ToolCalls[0].Name != "exec" || msgs[0].ToolCalls[0].Arguments != `{"command":"ls"}` || msgs[1].Content != "b" {
		t.Fatalf("newest two = %+v, %v", msgs, err)
	}
	if older, _ := db.ConversationMessages(ctx, "dev/telegram:7", msgs[0].Seq, 2); len(older) != 1 || older[0].Content != "a" {
		t.Errorf("older = %+v", older)
	}
	ap := newApproval("ap-conv", "dev/telegram:7", "c1")
	if _, _, err := db.CreateApproval(ctx, ap); err != nil {
		t.Fatal(err)
	}
	if got, err := db.SessionApprovals(ctx, "dev/telegram:7"); err != nil || len(got) != 1 || got[0].ID != "ap-conv" || got[0].Status != "pending" {
		t.Errorf("session approvals = %+v, %v", got, err)
	}
}

// TestConsoleAuditByToolAndOutcome: the tool filter finds every entry
// about approvals of that tool, the outcome filter the decisions with
// that status.
func TestConsoleAuditByToolAndOutcome(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for _, id := range []string{"ap-a", "ap-b"} {
		if _, _, err := db.CreateApproval(ctx, newApproval(id, "s/"+id, "c")); err != nil {
			t.Fatal(err)
		}
	}
	other := newApproval("ap-c", "s/c", "c")
	other.Tool = "web_fetch"
	if _, _, err := db.CreateApproval(ctx, other); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.DecideApproval(ctx, "ap-a", approvals.StatusDenied, "telegram:42"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.DecideApproval(ctx, "ap-c", approvals.StatusDenied, "telegram:42"); err != nil {
		t.Fatal(err)
	}
	page := func(f console.AuditFilter) []console.AuditEntry {
		t.Helper()
		f.Limit = 50
		out, err := db.AuditPage(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	byTool := page(console.AuditFilter{Tool: "exec"})
	for _, e := range byTool {
		if e.SubjectID == "ap-c" {
			t.Errorf("the exec filter found a web_fetch entry: %+v", e)
		}
	}
	if len(byTool) < 3 {
		t.Errorf("exec entries = %+v; want both requests and the decision", byTool)
	}
	denied := page(console.AuditFilter{Outcome: approvals.StatusDenied, Tool: "exec"})
	if len(denied) != 1 || denied[0].SubjectID != "ap-a" {
		t.Errorf("denied exec = %+v", denied)
	}
	if n := len(page(console.AuditFilter{Outcome: approvals.StatusDenied})); n != 2 {
		t.Errorf("denied = %d entries, want 2", n)
	}
}
