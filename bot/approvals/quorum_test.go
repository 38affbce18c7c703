package approvals_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// fakeChat is the pipeline as the approvals see it: it records what they
// ask, edit, answer and resume.
type fakeChat struct {
	mu       sync.Mutex
	asked    []bot.OutboxMessage
	roles    []string
	progress []string // texts shown while pending, one per approver message edit
	buttons  bool     // every progress edit kept its buttons
	finished []string
	answers  []string
	resumed  int
}

func (f *fakeChat) AskDecision(_ context.Context, _ bot.DecisionMessages, m bot.OutboxMessage, _, _, role string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.asked, f.roles = append(f.asked, m), append(f.roles, role)
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

func (f *fakeChat) AnswerPress(_ context.Context, _ channels.Inbound, text string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers = append(f.answers, text)
}

func (f *fakeChat) Notify(context.Context, channels.Inbound, string) {}

func (f *fakeChat) Resume(context.Context, string, channels.Address, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resumed++
}

func (f *fakeChat) SessionKey(context.Context, channels.Address) string { return "" }

// press makes identity ("platform:user") press choice on approval id and
// returns the answer it got.
func (f *fakeChat) press(t *testing.T, s *approvals.Service, identity, id, choice string) string {
	t.Helper()
	platform, user, _ := strings.Cut(identity, ":")
	s.Decide(context.Background(), channels.Inbound{Platform: platform, UserID: user, ChatID: user,
		Press: &channels.ButtonPress{Data: approvals.ButtonKind + ":" + id + ":" + choice}}, id, choice)
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.answers[len(f.answers)-1]
}

// twoPerson is a service whose exec calls need two people of the oncall
// group, which includes the requester dev (on two accounts) and alice
// (on two accounts).
func twoPerson(t *testing.T, timeout time.Duration, rule approvals.Rule) (*approvals.Service, *fakeChat) {
	t.Helper()
	db := pgtest.Open(t, context.Background())
	rule.Tools, rule.Quorum = []string{"exec"}, 2
	rule.Approvers = []string{"telegram:700", "slack:UDEV", "telegram:1001", "slack:UALICE", "telegram:1002"}
	s := approvals.New(approvals.Options{Store: db, Messages: db, Approvers: []string{"telegram:500"}, Timeout: timeout,
		Rules:  []approvals.Rule{rule},
		People: map[string]string{"telegram:700": "dev", "slack:UDEV": "dev", "telegram:1001": "alice", "slack:UALICE": "alice"}})
	f := &fakeChat{}
	s.Attach(f)
	return s, f
}

func execRequest(call string) tools.ApprovalRequest {
	return tools.ApprovalRequest{Tool: "exec", Command: "deploy prod", Pattern: "deploy prod", Class: "mutating",
		Call: tools.Call{Channel: "telegram", ChatID: "700", UserID: "telegram:700", Session: "ops/telegram:700", Agent: "ops", ToolCallID: call}}
}

// approvalID returns the id the buttons of the first request carry.
func approvalID(t *testing.T, f *fakeChat) string {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range f.asked {
		for _, row := range m.Buttons {
			for _, b := range row {
				parts := strings.Split(b.Data, ":")
				return parts[1]
			}
		}
	}
	t.Fatal("no approval request was sent with buttons")
	return ""
}

func decision(t *testing.T, s *approvals.Service, req tools.ApprovalRequest) (tools.Decision, bool) {
	t.Helper()
	d, err := s.Approve(context.Background(), req)
	if errors.Is(err, tools.ErrPending) {
		return d, false
	}
	if err != nil {
		t.Fatal(err)
	}
	return d, true
}

func TestQuorumNeedsTwoOtherPeople(t *testing.T) {
	s, f := twoPerson(t, time.Minute, approvals.Rule{})
	req := execRequest("call-1")
	if _, done := decision(t, s, req); done {
		t.Fatal("a two-person request was decided at once")
	}
	if len(f.asked) != 5 {
		t.Fatalf("asked %d approvers (plus requester note), want the rule's 5 approvers", len(f.asked))
	}
	if !strings.Contains(f.asked[0].Text, "Needs 2 people to allow") {
		t.Errorf("request card %q does not say it needs two people", f.asked[0].Text)
	}
	id := approvalID(t, f)
	for _, tc := range []struct{ who, id, choice, want string }{
		{"telegram:700", id, "o", "You asked for this; another approver must decide."},
		{"slack:UDEV", id, "o", "You asked for this; another approver must decide."}, // the requester's second account
		{"telegram:500", id, "o", "You may not decide this."},                        // an approver, but not this rule's
		{"telegram:666", id, "d", "You may not decide this."},
		{"telegram:1001", "forged-id", "o", "This request no longer exists."},
		{"telegram:1001", id, "x", "This button is no longer active."},
	} {
		if got := f.press(t, s, tc.who, tc.id, tc.choice); got != tc.want {
			t.Errorf("%s pressing %s:%s answered %q, want %q", tc.who, tc.id, tc.choice, got, tc.want)
		}
	}
	if len(f.progress) != 0 {
		t.Fatalf("refused presses changed the messages: %q", f.progress)
	}
	if got := f.press(t, s, "telegram:1001", id, "o"); got != "Your vote is counted: 1 of 2." {
		t.Fatalf("alice's vote answered %q", got)
	}
	if len(f.progress) != 1 || !strings.Contains(f.progress[0], "1 of 2 — ✅ telegram:1001") || !f.buttons {
		t.Fatalf("after one vote the messages show %q (buttons kept: %v)", f.progress, f.buttons)
	}
	list := approvals.Commands(s)[0].Run(context.Background(), nil, channels.Inbound{Platform: "telegram", UserID: "1002"}, "")
	if !strings.Contains(list, "votes: 1 of 2 — ✅ telegram:1001") {
		t.Errorf("/approvals shows %q; want the vote", list)
	}
	// Alice again, from her other account: one person, one vote.
	if got := f.press(t, s, "slack:UALICE", id, "o"); got != "You voted already; another approver must decide." {
		t.Fatalf("alice's second account answered %q", got)
	}
	if _, done := decision(t, s, req); done || f.resumed != 0 {
		t.Fatalf("decided after one person's vote (resumed %d)", f.resumed)
	}
	if got := f.press(t, s, "telegram:1002", id, "o"); got != "Done: allowed once." {
		t.Fatalf("bob's vote answered %q", got)
	}
	if f.resumed != 1 || len(f.finished) != 1 || !strings.Contains(f.finished[0], "telegram:1001, telegram:1002") {
		t.Fatalf("after the quorum: resumed %d, finished %q", f.resumed, f.finished)
	}
	if d, done := decision(t, s, req); !done || d != tools.AllowedOnce {
		t.Fatalf("decision after the quorum = %v, %v; want allowed once", d, done)
	}
	if got := f.press(t, s, "telegram:1002", id, "d"); !strings.HasPrefix(got, "Already decided") || f.resumed != 1 {
		t.Fatalf("a replayed press answered %q (resumed %d)", got, f.resumed)
	}
}

func TestQuorumOneDenyDenies(t *testing.T) {
	s, f := twoPerson(t, time.Minute, approvals.Rule{})
	req := execRequest("call-deny")
	decision(t, s, req)
	id := approvalID(t, f)
	f.press(t, s, "telegram:1001", id, "o")
	if got := f.press(t, s, "telegram:1002", id, "d"); got != "Done: denied." {
		t.Fatalf("deny answered %q", got)
	}
	if d, done := decision(t, s, req); !done || d != tools.Denied || f.resumed != 1 {
		t.Fatalf("decision = %v, %v (resumed %d); want denied", d, done, f.resumed)
	}
}

func TestQuorumSelfApproveCounts(t *testing.T) {
	s, f := twoPerson(t, time.Minute, approvals.Rule{SelfApprove: true})
	decision(t, s, execRequest("call-self"))
	id := approvalID(t, f)
	if got := f.press(t, s, "telegram:700", id, "o"); got != "Your vote is counted: 1 of 2." {
		t.Fatalf("with self_approve the requester's vote answered %q", got)
	}
}

func TestQuorumVoteAfterExpiry(t *testing.T) {
	s, f := twoPerson(t, 200*time.Millisecond, approvals.Rule{})
	req := execRequest("call-late")
	decision(t, s, req)
	id := approvalID(t, f)
	time.Sleep(250 * time.Millisecond) // past the request's expiry
	if got := f.press(t, s, "telegram:1001", id, "o"); !strings.Contains(got, "Expired") {
		t.Fatalf("a vote after expiry answered %q", got)
	}
	if f.resumed != 1 || len(f.progress) != 0 {
		t.Fatalf("after a late vote: resumed %d, progress %q; want the run resumed once and no vote shown", f.resumed, f.progress)
	}
	if d, done := decision(t, s, req); !done || d != tools.Expired {
		t.Fatalf("decision = %v, %v; want expired", d, done)
	}
}

func TestQuorumEscalates(t *testing.T) {
	s, f := twoPerson(t, time.Minute, approvals.Rule{EscalateAfter: time.Millisecond, EscalateTo: []string{"telegram:1009"}})
	ctx := context.Background()
	decision(t, s, execRequest("call-esc"))
	id := approvalID(t, f)
	if got := f.press(t, s, "telegram:1009", id, "o"); got != "You may not decide this." {
		t.Fatalf("the escalation target before escalation answered %q", got)
	}
	asked := len(f.asked)
	deadline := time.Now().Add(5 * time.Second)
	for {
		n, err := s.EscalateDue(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request never escalated")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if n, err := s.EscalateDue(ctx); err != nil || n != 0 {
		t.Fatalf("a second EscalateDue = %d, %v; want nothing", n, err)
	}
	if len(f.asked) != asked+1 || f.asked[asked].To.String() != "telegram:1009" || f.roles[asked] != approvals.RoleEscalated ||
		!strings.Contains(f.asked[asked].Text, "Escalated") || len(f.asked[asked].Buttons) == 0 {
		t.Fatalf("escalation sent %+v", f.asked[asked:])
	}
	// Queued before the mark, under a key of its own: a crash in between,
	// or two replicas at once, queue it again under the same key, which
	// the outbox stores once.
	if key := f.asked[asked].Key; key != "escalation:"+id+":telegram:1009" {
		t.Errorf("the escalation message's key = %q; want one naming the approval and the target", key)
	}
	if got := f.press(t, s, "telegram:1009", id, "o"); got != "Your vote is counted: 1 of 2." {
		t.Fatalf("the escalation target's vote answered %q", got)
	}
}

func TestAdminAPIVoteCountsOnce(t *testing.T) {
	s, f := twoPerson(t, time.Minute, approvals.Rule{})
	decision(t, s, execRequest("call-api"))
	id := approvalID(t, f)
	ctx := context.Background()
	if _, outcome, err := s.Vote(ctx, id, approvals.StatusAllowedOnce, "admin-api"); err != nil || outcome != approvals.VoteCounted {
		t.Fatalf("API vote = %v, %v; want counted", outcome, err)
	}
	if _, outcome, err := s.Vote(ctx, id, approvals.StatusAllowedOnce, "admin-api"); err != nil || outcome != approvals.VoteRepeated {
		t.Fatalf("second API vote = %v, %v; want repeated", outcome, err)
	}
	if _, _, err := s.Vote(ctx, id, approvals.StatusAllowedOnce, "telegram:700"); !errors.Is(err, approvals.ErrOwnRequest) {
		t.Fatalf("the requester deciding through the API = %v; want ErrOwnRequest", err)
	}
}
