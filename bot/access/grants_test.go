package access_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// fakeChat is the pipeline as the access feature sees it: it records what
// it asks, edits, answers and sends.
type fakeChat struct {
	mu       sync.Mutex
	asked    []bot.OutboxMessage
	progress []string // texts shown while pending
	buttons  bool     // every progress edit kept its buttons
	finished []string
	answers  []string
	sent     []string
}

func (f *fakeChat) Send(_ context.Context, m bot.OutboxMessage) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, m.Text)
}

func (f *fakeChat) Notify(context.Context, channels.Inbound, string)             {}
func (f *fakeChat) NoticeOnce(context.Context, channels.Inbound, string, string) {}

func (f *fakeChat) AnswerPress(_ context.Context, _ channels.Inbound, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, text)
}

func (f *fakeChat) AskDecision(_ context.Context, _ bot.DecisionMessages, m bot.OutboxMessage, _, _, _ string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked = append(f.asked, m)
}

func (f *fakeChat) EditDecisions(_ context.Context, _ bot.DecisionMessages, _, _ string, text func(bot.DecisionMessage) string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished = append(f.finished, text(bot.DecisionMessage{Role: "approver"}))
}

func (f *fakeChat) ShowProgress(_ context.Context, _ bot.DecisionMessages, _, _ string, render func(bot.DecisionMessage) (string, [][]channels.Button)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	text, buttons := render(bot.DecisionMessage{Role: "approver"})
	f.progress = append(f.progress, text)
	f.buttons = len(buttons) > 0 && (len(f.progress) == 1 || f.buttons)
}

// press makes identity ("platform:user") press choice on grant request id
// and returns the answer it got.
func (f *fakeChat) press(t *testing.T, s *access.Service, identity, id, choice string) string {
	t.Helper()
	platform, user, _ := strings.Cut(identity, ":")
	s.DecideGrantPress(context.Background(), channels.Inbound{Platform: platform, UserID: user, ChatID: user,
		Press: &channels.ButtonPress{Data: access.GrantButton + ":" + id + ":" + choice}}, id, choice)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.answers[len(f.answers)-1]
}

// requestID returns the id the buttons of the last request carry.
func (f *fakeChat) requestID(t *testing.T) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.asked) == 0 || len(f.asked[len(f.asked)-1].Buttons) == 0 {
		t.Fatal("no grant request was sent with buttons")
	}
	return strings.Split(f.asked[len(f.asked)-1].Buttons[0][0].Data, ":")[1]
}

// call is a tool call by dev (telegram:42) through agent ops.
var call = tools.Call{Agent: "ops", UserID: "telegram:42", Channel: "telegram", ChatID: "42"}

// grantService is an access service whose grants of mcp:github's tools
// are ruled by rules; the admin is telegram:500, approvals.approvers are
// telegram:1 and telegram:2. dev is telegram:42 and
// slack:U42, alice telegram:1 and slack:U1.
func grantService(t *testing.T, rules ...quorum.Rule) (*access.Service, *fakeChat) {
	t.Helper()
	db := pgtest.Open(t, context.Background())
	s := access.New(access.Options{Grants: db, Messages: db, Admins: []string{"telegram:500"}, Rules: rules,
		Approvers: []string{"telegram:1", "telegram:2"},
		People:    quorum.People{"telegram:42": "dev", "slack:U42": "dev", "telegram:1": "alice", "slack:U1": "alice"},
		ToolInfo: func(server, tool string) (string, string, []string) {
			return "mcp_" + server + "_" + tool, "mutating", []string{"mcp", "mcp:" + server}
		}})
	f := &fakeChat{}
	s.Attach(f)
	return s, f
}

// TestGrantQuorum: a grant request matched by a rule (by the tool's
// registry name) needs two people; the subject's presses, from either of
// their accounts, count nothing; a non-approver, a forged choice and a
// forged id change nothing; a person votes once; the votes show with the
// buttons kept; the second approval grants, and a replayed press is told
// it is decided.
func TestGrantQuorum(t *testing.T) {
	ctx := context.Background()
	s, f := grantService(t, quorum.Rule{Tools: []string{"mcp_github_create_issue"}, Quorum: 2,
		Approvers: []string{"telegram:1", "slack:U1", "telegram:2", "telegram:42", "slack:U42"}})
	if why, ok := s.CheckGrant(ctx, call, "github", "create_issue"); ok || !strings.Contains(why, "I asked the admins") {
		t.Fatalf("first call = %q, %v", why, ok)
	}
	if len(f.asked) != 5 || !strings.Contains(f.asked[0].Text, "Needs 2 people to approve") ||
		!strings.Contains(f.asked[0].Text, "0 of 2 — no votes yet") {
		t.Fatalf("asked %d approvers: %+v", len(f.asked), f.asked)
	}
	id := f.requestID(t)
	for _, tc := range []struct{ who, choice, want string }{
		{"telegram:42", "a", "You asked for this; another approver must decide."},
		{"slack:U42", "a", "You asked for this; another approver must decide."},
		{"telegram:500", "a", "You may not decide this."}, // an admin, but the rule names the approvers
		{"telegram:9", "a", "You may not decide this."},
		{"telegram:1", "x", "This button is no longer active."},
	} {
		if got := f.press(t, s, tc.who, id, tc.choice); got != tc.want {
			t.Errorf("%s pressing %q: %q, want %q", tc.who, tc.choice, got, tc.want)
		}
	}
	if got := f.press(t, s, "telegram:1", "forgedrequestid00000", "a"); got != "This request no longer exists." {
		t.Errorf("forged id: %q", got)
	}
	if got := f.press(t, s, "telegram:1", id, "a"); got != "Your vote is counted: 1 of 2." {
		t.Fatalf("alice's vote: %q", got)
	}
	if got := f.press(t, s, "slack:U1", id, "a"); got != "You voted already; another approver must decide." {
		t.Errorf("alice's second account: %q", got)
	}
	if len(f.progress) != 1 || !strings.Contains(f.progress[0], "1 of 2 — ✅ telegram:1") || !f.buttons {
		t.Fatalf("progress = %q (buttons kept: %v)", f.progress, f.buttons)
	}
	if why, ok := s.CheckGrant(ctx, call, "github", "create_issue"); ok || !strings.Contains(why, "waiting for an admin") {
		t.Fatalf("call before the quorum = %q, %v", why, ok)
	}
	if got := f.press(t, s, "telegram:2", id, "a"); got != "Approved." {
		t.Fatalf("second vote: %q", got)
	}
	if len(f.finished) != 1 || !strings.Contains(f.finished[0], "2 of 2 — ✅ telegram:1, ✅ telegram:2") ||
		len(f.sent) != 1 || !strings.Contains(f.sent[0], "2 approvers granted create_issue of mcp:github") {
		t.Fatalf("finished %q, sent %q", f.finished, f.sent)
	}
	if _, ok := s.CheckGrant(ctx, call, "github", "create_issue"); !ok {
		t.Fatal("the granted tool is still refused")
	}
	if got := f.press(t, s, "telegram:2", id, "d"); got != "Already decided: approved by telegram:1, telegram:2." {
		t.Errorf("replayed press: %q", got)
	}
	if len(f.finished) != 1 || len(f.sent) != 1 {
		t.Errorf("a replayed press edited or told again: %q, %q", f.finished, f.sent)
	}
}

// TestGrantQuorumDeny: a rule naming no approvers (matched by the
// server's group) is decided by approvals.approvers; one Deny denies.
func TestGrantQuorumDeny(t *testing.T) {
	ctx := context.Background()
	s, f := grantService(t, quorum.Rule{Tools: []string{"group:mcp:github"}, Quorum: 2})
	s.CheckGrant(ctx, call, "github", "delete_repo")
	if len(f.asked) != 2 {
		t.Fatalf("asked %d people; want approvals.approvers' two", len(f.asked))
	}
	id := f.requestID(t)
	if got := f.press(t, s, "telegram:500", id, "a"); got != "You may not decide this." {
		t.Errorf("an admin outside the rule's approvers: %q", got)
	}
	f.press(t, s, "telegram:1", id, "a")
	if got := f.press(t, s, "telegram:2", id, "d"); got != "Denied." {
		t.Fatalf("deny: %q", got)
	}
	if why, ok := s.CheckGrant(ctx, call, "github", "delete_repo"); ok || !strings.Contains(why, "declined") {
		t.Fatalf("call after the deny = %q, %v", why, ok)
	}
}

// TestGrantWithoutRule: no rule matches (a rule for another class), so
// one admin decides as before rules, and only an admin.
func TestGrantWithoutRule(t *testing.T) {
	ctx := context.Background()
	s, f := grantService(t, quorum.Rule{Classes: []string{"read_only"}, Quorum: 2, Approvers: []string{"telegram:1", "telegram:2"}})
	s.CheckGrant(ctx, call, "github", "create_issue")
	if len(f.asked) != 1 || strings.Contains(f.asked[0].Text, "Needs") {
		t.Fatalf("asked = %+v; want the admin alone, no quorum", f.asked)
	}
	id := f.requestID(t)
	if got := f.press(t, s, "telegram:1", id, "a"); got != "You may not decide this." {
		t.Errorf("a rule's approver deciding an unruled request: %q", got)
	}
	if got := f.press(t, s, "telegram:500", id, "a"); got != "Approved." {
		t.Fatalf("admin: %q", got)
	}
	if _, ok := s.CheckGrant(ctx, call, "github", "create_issue"); !ok {
		t.Fatal("the granted tool is still refused")
	}
}
