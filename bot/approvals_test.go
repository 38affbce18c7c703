package bot_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// press builds a button press by user on the i-th message sent to chat.
func press(p *pipeline, chat, user, data string, i int) channels.Inbound {
	return channels.Inbound{Platform: "test", ChatID: chat, UserID: user, UserName: "U" + user,
		ExternalID: "press-" + data + "-" + user + "-" + time.Now().Format("150405.000000000") + "-" + strconv.FormatInt(extID.Add(1), 10),
		Press:      &channels.ButtonPress{ID: "cb", Data: data, MessageID: p.ch.IDOf(chat, i)}}
}

func approvalRequest(session, callID, cmd string) tools.ApprovalRequest {
	return tools.ApprovalRequest{Tool: "exec", Command: cmd, Cwd: ".", Pattern: cmd, Call: tools.Call{
		Channel: "test", ChatID: "work", UserID: "test:dev", Session: session, Agent: "default", ToolCallID: callID}}
}

// pending asserts that Approve parks (returns a *tools.PendingError) and
// returns what it waits for.
func pending(t *testing.T, ap *approvals.Service, req tools.ApprovalRequest) tools.Waiting {
	t.Helper()
	d, err := ap.Approve(context.Background(), req)
	var pe *tools.PendingError
	if !errors.As(err, &pe) {
		t.Fatalf("Approve = %v, %v; want a pending request", d, err)
	}
	return pe.Waiting
}

// decided asserts that Approve returns decision want without waiting.
func decided(t *testing.T, ap *approvals.Service, req tools.ApprovalRequest, want tools.Decision) {
	t.Helper()
	d, err := ap.Approve(context.Background(), req)
	if err != nil || d != want {
		t.Fatalf("Approve = %v, %v; want %v", d, err, want)
	}
}

// resumeFunc is the pipeline p.router with the resuming of parked runs
// replaced by resume (nil: none), for approval services of their own.
type resumeFunc struct {
	approvals.Pipeline
	resume func(session string)
}

// Resume implements approvals.Pipeline.
func (r resumeFunc) Resume(_ context.Context, session string, _ channels.Address, _ string) {
	if r.resume != nil {
		r.resume(session)
	}
}

func buttonData(t *testing.T, m channels.Outbound, label string) string {
	t.Helper()
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Label == label {
				return b.Data
			}
		}
	}
	t.Fatalf("no %q button on %q", label, m.Text)
	return ""
}

func TestApprovalAllowOnceByApproverOnly(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	ctx := context.Background()
	req := approvalRequest("default/test:work", "call-1", "echo hi; ls -la")
	if w := pending(t, p.approvals, req); !w.New || w.What != "echo hi; ls -la" {
		t.Fatalf("first Approve waiting = %+v; want a new request for the command", w)
	}

	ask := p.ch.WaitFor(t, "boss", 1)[0]
	if !strings.Contains(ask.Text, "echo hi; ls -la") || !strings.Contains(ask.Text, "test:dev") {
		t.Fatalf("approver message lacks the exact command or the requester: %q", ask.Text)
	}
	wait := p.ch.WaitFor(t, "work", 1)[0]
	if !strings.Contains(wait.Text, "Waiting") || !strings.Contains(wait.Text, "/cancel") {
		t.Fatalf("requester chat note = %q", wait.Text)
	}
	once := buttonData(t, ask, "Allow once")

	// A forged press by someone else changes nothing.
	p.router.Handle(ctx, press(p, "boss", "mallory", once, 0))
	if a := p.ch.lastAnswer(); a != "You may not decide this." {
		t.Fatalf("non-approver answer = %q", a)
	}
	if w := pending(t, p.approvals, req); w.New {
		t.Fatalf("asking again made a second request: %+v", w)
	}
	if n := p.ch.Count("boss"); n != 1 {
		t.Fatalf("approver got %d requests, want 1", n)
	}

	p.router.Handle(ctx, press(p, "boss", "boss", once, 0))
	decided(t, p.approvals, req, tools.AllowedOnce)
	edited := p.ch.waitEdit(t, p.ch.IDOf("boss", 0))
	if !strings.Contains(edited, "Allowed once by test:boss") {
		t.Fatalf("approver message after decision = %q", edited)
	}
	if e := p.ch.waitEdit(t, p.ch.IDOf("work", 0)); !strings.Contains(e, "Allowed once by test:boss") {
		t.Fatalf("requester note after decision = %q", e)
	}
	// A replayed press changes nothing and says so.
	p.router.Handle(ctx, press(p, "boss", "boss", buttonData(t, ask, "Deny"), 0))
	if a := p.ch.lastAnswer(); !strings.Contains(a, "Already decided") {
		t.Fatalf("replayed press answer = %q", a)
	}
	// Allow once is used up: the same step asking again is a new request.
	if w := pending(t, p.approvals, req); !w.New {
		t.Fatalf("a used allow-once authorized a second execution: %+v", w)
	}
	p.ch.WaitFor(t, "boss", 2)
	var used int
	if err := p.db.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'approval.used'`).Scan(&used); err != nil {
		t.Fatal(err)
	}
	if used != 1 {
		t.Fatalf("audit log shows %d executions of allow-once approvals, want 1", used)
	}
}

func TestApprovalRaceTwoApprovers(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:a1", "test:a2"}})
	ctx := context.Background()
	req := approvalRequest("default/test:work", "call-race", "make deploy")
	pending(t, p.approvals, req)
	m1 := p.ch.WaitFor(t, "a1", 1)[0]
	m2 := p.ch.WaitFor(t, "a2", 1)[0]
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		p.router.Handle(ctx, press(p, "a1", "a1", buttonData(t, m1, "Allow once"), 0))
	}()
	go func() { defer wg.Done(); p.router.Handle(ctx, press(p, "a2", "a2", buttonData(t, m2, "Deny"), 0)) }()
	wg.Wait()
	done, already := 0, 0
	p.ch.mu.Lock()
	for _, a := range p.ch.answers {
		switch {
		case strings.HasPrefix(a, "Done"):
			done++
		case strings.HasPrefix(a, "Already decided"):
			already++
		}
	}
	p.ch.mu.Unlock()
	if done != 1 || already != 1 {
		t.Fatalf("want one winner and one 'already decided', got %d/%d", done, already)
	}
	d, err := p.approvals.Approve(ctx, req)
	if err != nil || (d != tools.AllowedOnce && d != tools.Denied) {
		t.Fatalf("decision = %v, %v", d, err)
	}
}

func TestApprovalAlwaysAllowStoresFullPattern(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	ctx := context.Background()
	req := approvalRequest("default/test:work", "call-aa", "echo a")
	pending(t, p.approvals, req)
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	p.router.Handle(ctx, press(p, "boss", "boss", buttonData(t, ask, "Always allow"), 0))
	decided(t, p.approvals, req, tools.AllowedAlways)
	for pattern, want := range map[string]bool{"echo a": true, "echo a; id": false, "echo b": false, "echo": false} {
		got, err := p.approvals.AlwaysAllowed(ctx, "exec", pattern)
		if err != nil || got != want {
			t.Errorf("AlwaysAllowed(%q) = %v, %v; want %v", pattern, got, err, want)
		}
	}
}

// TestApprovalDangerousCommand: a command the guard flagged shows its
// warnings in the request, in /approvals and in the outcome, offers no
// "Always allow", and a forged always press neither decides nor stores a
// pattern.
func TestApprovalDangerousCommand(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	ctx := context.Background()
	req := approvalRequest("default/test:work", "call-danger", "crontab jobs.txt")
	req.Warnings = []string{"installs a crontab: its commands run later on a schedule, without asking"}
	pending(t, p.approvals, req)
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	if !strings.Contains(ask.Text, "⚠️ Dangerous: installs a crontab") {
		t.Fatalf("approver message lacks the warning: %q", ask.Text)
	}
	for _, row := range ask.Buttons {
		for _, b := range row {
			if b.Label == "Always allow" {
				t.Fatalf("a dangerous command offers Always allow: %+v", ask.Buttons)
			}
		}
	}
	list, err := p.approvals.Pending(ctx)
	if err != nil || len(list) != 1 || len(list[0].Warnings) != 1 {
		t.Fatalf("pending = %+v, %v; want one with its warning", list, err)
	}

	id := strings.Split(buttonData(t, ask, "Allow once"), ":")[1]
	forged := "ap:" + id + ":a"
	p.router.Handle(ctx, press(p, "boss", "boss", forged, 0))
	if a := p.ch.lastAnswer(); !strings.Contains(a, "not offered for a command flagged dangerous") {
		t.Fatalf("forged always press answer = %q", a)
	}
	if w := pending(t, p.approvals, req); w.New {
		t.Fatalf("the forged press decided or replaced the request: %+v", w)
	}
	if got, _ := p.approvals.AlwaysAllowed(ctx, "exec", "crontab jobs.txt"); got {
		t.Fatal("a forged always press stored an always-allow pattern")
	}

	p.router.Handle(ctx, press(p, "boss", "boss", buttonData(t, ask, "Allow once"), 0))
	decided(t, p.approvals, req, tools.AllowedOnce)
	if e := p.ch.waitEdit(t, p.ch.IDOf("boss", 0)); !strings.Contains(e, "⚠️ Dangerous: installs a crontab") {
		t.Fatalf("outcome lacks the warning: %q", e)
	}
}

func TestApprovalExpires(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	var resumed []string
	var mu sync.Mutex
	ap := approvals.New(approvals.Options{Store: p.db, Messages: p.db, Approvers: []string{"test:boss"}, Timeout: 400 * time.Millisecond})
	ap.Attach(resumeFunc{p.router, func(session string) { mu.Lock(); resumed = append(resumed, session); mu.Unlock() }})
	req := approvalRequest("default/test:work", "call-exp", "sleep 1")
	pending(t, ap, req)
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	if n, err := ap.ExpireDue(context.Background()); err != nil || n != 0 {
		t.Fatalf("ExpireDue before the deadline = %d, %v; want 0", n, err)
	}
	time.Sleep(500 * time.Millisecond)
	if n, err := ap.ExpireDue(context.Background()); err != nil || n != 1 {
		t.Fatalf("ExpireDue after the deadline = %d, %v; want 1", n, err)
	}
	mu.Lock()
	if len(resumed) != 1 || resumed[0] != "default/test:work" {
		t.Errorf("resumed %q after expiry, want the session once", resumed)
	}
	mu.Unlock()
	decided(t, ap, req, tools.Expired)
	if e := p.ch.waitEdit(t, p.ch.IDOf("boss", 0)); !strings.Contains(e, "Expired") {
		t.Fatalf("expired message = %q", e)
	}
	// A press after expiry changes nothing.
	p.router.Handle(context.Background(), press(p, "boss", "boss", buttonData(t, ask, "Allow once"), 0))
	if a := p.ch.lastAnswer(); !strings.Contains(a, "Already decided") && !strings.Contains(a, "no longer") {
		t.Fatalf("late press answer = %q", a)
	}
}

// countedApprovals counts DueApprovals calls, to see when ExpireDue asks.
type countedApprovals struct {
	approvals.Store
	due atomic.Int32
}

func (c *countedApprovals) DueApprovals(ctx context.Context) ([]approvals.Approval, time.Time, error) {
	c.due.Add(1)
	return c.Store.DueApprovals(ctx)
}

// TestApprovalExpiryAsksOnlyWhenDue: once ExpireDue has looked, it does not
// ask the store again before the next approval it knows of can be due, and
// it expires that one when it is.
func TestApprovalExpiryAsksOnlyWhenDue(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	store := &countedApprovals{Store: p.db}
	ap := approvals.New(approvals.Options{Store: store, Messages: p.db, Approvers: []string{"test:boss"}, Timeout: 600 * time.Millisecond})
	ap.Attach(resumeFunc{p.router, nil})
	ctx := context.Background()
	req := approvalRequest("default/test:work", "call-look", "sleep 2")
	pending(t, ap, req)
	for range 5 {
		if n, err := ap.ExpireDue(ctx); err != nil || n != 0 {
			t.Fatalf("ExpireDue before the deadline = %d, %v; want 0", n, err)
		}
	}
	if got := store.due.Load(); got != 1 {
		t.Fatalf("five ExpireDue calls before the deadline asked the store %d times, want once", got)
	}
	time.Sleep(700 * time.Millisecond)
	if n, err := ap.ExpireDue(ctx); err != nil || n != 1 {
		t.Fatalf("ExpireDue after the deadline = %d, %v; want 1", n, err)
	}
	decided(t, ap, req, tools.Expired)
	if got := store.due.Load(); got != 2 {
		t.Fatalf("the store was asked %d times, want twice", got)
	}
	// Nothing pending: the next look is approvalLookEvery away (10s), unless
	// this process asks for an approval, which it then looks for on time.
	if n, err := ap.ExpireDue(ctx); err != nil || n != 0 || store.due.Load() != 2 {
		t.Fatalf("ExpireDue with nothing pending = %d, %v after %d looks; want 0 without a look", n, err, store.due.Load())
	}
	second := approvalRequest("default/test:work", "call-look-2", "sleep 3")
	pending(t, ap, second)
	time.Sleep(700 * time.Millisecond)
	if n, err := ap.ExpireDue(ctx); err != nil || n != 1 {
		t.Fatalf("ExpireDue after the second approval's deadline = %d, %v; want 1", n, err)
	}
	decided(t, ap, second, tools.Expired)
}

// TestApprovalSurvivesRestart: a new service instance (a restart) asked
// for the same call finds the same request without posting it again, and
// a press decides it.
func TestApprovalSurvivesRestart(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	req := approvalRequest("default/test:work", "call-dur", "uptime")
	pending(t, p.approvals, req)
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	restarted := approvals.New(approvals.Options{Store: p.db, Messages: p.db, Approvers: []string{"test:boss"}, Timeout: time.Minute})
	restarted.Attach(resumeFunc{p.router, nil})
	if w := pending(t, restarted, req); w.New {
		t.Fatalf("the restarted service asked again: %+v", w)
	}
	if n := p.ch.Count("boss"); n != 1 {
		t.Fatalf("approvers got %d requests, want the original one only", n)
	}
	p.router.Handle(context.Background(), press(p, "boss", "boss", buttonData(t, ask, "Allow once"), 0))
	decided(t, restarted, req, tools.AllowedOnce)
}

func TestAccessRequestFlow(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Mode: bot.AccessModeRequest, Admins: []string{"test:boss"}})
	ctx := context.Background()
	p.router.Handle(ctx, msg("dm-new", "new", "hello?"))
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	if !strings.Contains(ask.Text, "test:new") || !strings.Contains(ask.Text, "Unew") {
		t.Fatalf("admin message should name the identity and display name: %q", ask.Text)
	}
	if told := p.ch.WaitFor(t, "dm-new", 1)[0]; !strings.Contains(told.Text, "asked an admin") {
		t.Fatalf("user told %q", told.Text)
	}
	// Writing again does not spam the admins.
	p.router.Handle(ctx, msg("dm-new", "new", "hello??"))
	time.Sleep(300 * time.Millisecond)
	if n := p.ch.Count("boss"); n != 1 {
		t.Fatalf("admins got %d requests", n)
	}
	// A forged press by the requester changes nothing.
	p.router.Handle(ctx, press(p, "boss", "new", buttonData(t, ask, "Approve"), 0))
	if a := p.ch.lastAnswer(); a != "You may not decide this." {
		t.Fatalf("forged press answer = %q", a)
	}
	if ok, _ := p.db.IsAllowed(ctx, "test:new"); ok {
		t.Fatal("a forged press allowed the user")
	}
	p.router.Handle(ctx, press(p, "boss", "boss", buttonData(t, ask, "Approve"), 0))
	if told := p.ch.WaitFor(t, "dm-new", 2)[1]; !strings.Contains(told.Text, "let you in") {
		t.Fatalf("approved user told %q", told.Text)
	}
	if e := p.ch.waitEdit(t, p.ch.IDOf("boss", 0)); !strings.Contains(e, "Approved") || !strings.Contains(e, "test:boss") {
		t.Fatalf("admin message after decision = %q", e)
	}
	p.router.Handle(ctx, msg("dm-new", "new", "now I'm in"))
	if r := p.ch.WaitFor(t, "dm-new", 3)[2]; !strings.Contains(r.Text, "echo: now I'm in") {
		t.Fatalf("approved user's message not answered by the agent: %q", r.Text)
	}
	// Revoke shuts them out again.
	p.router.Handle(ctx, msg("boss-dm", "boss", "/revoke test:new"))
	if r := p.ch.WaitFor(t, "boss-dm", 1)[0]; !strings.Contains(r.Text, "Revoked") {
		t.Fatalf("/revoke answer = %q", r.Text)
	}
	if ok, _ := p.db.IsAllowed(ctx, "test:new"); ok {
		t.Fatal("revoked user still allowed")
	}
}

func TestAccessRequestDeniedToldOnce(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Mode: bot.AccessModeRequest, Admins: []string{"test:boss"}})
	ctx := context.Background()
	p.router.Handle(ctx, msg("dm-x", "x", "let me in"))
	ask := p.ch.WaitFor(t, "boss", 1)[0]
	p.router.Handle(ctx, press(p, "boss", "boss", buttonData(t, ask, "Deny"), 0))
	if told := p.ch.WaitFor(t, "dm-x", 2)[1]; !strings.Contains(told.Text, "declined") {
		t.Fatalf("denied user told %q", told.Text)
	}
	p.router.Handle(ctx, msg("dm-x", "x", "pretty please"))
	time.Sleep(300 * time.Millisecond)
	if n, m := p.ch.Count("dm-x"), p.ch.Count("boss"); n != 2 || m != 1 {
		t.Fatalf("after denial: user got %d messages (want 2), admins %d (want 1)", n, m)
	}
}

// TestApprovalSaysWhoAsks: a request from a subagent or a teammate says so
// on the approver's card, with the chat it works for.
func TestApprovalSaysWhoAsks(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	for i, c := range []struct{ session, want string }{
		{"default/" + tools.SubScope("ab12cd34", "default/test:work"), "a subagent of default (session default/test:work) wants to run `exec`"},
		{"ops/" + tools.TeamScope("crew", "test:work"), "agent default, working for team crew, wants to run `exec`"},
	} {
		pending(t, p.approvals, approvalRequest(c.session, fmt.Sprint("call-who-", i), "uptime"))
		ask := p.ch.WaitFor(t, "boss", i+1)[i]
		if !strings.Contains(ask.Text, c.want) || !strings.Contains(ask.Text, "in test:work") {
			t.Errorf("card = %q; want %q and the chat", ask.Text, c.want)
		}
	}
}
