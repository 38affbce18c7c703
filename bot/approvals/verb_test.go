package approvals_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// TestPublishVerbButtonsAndOutcomes: a request with the publish verb asks
// with Publish / Reject (no Always allow, which a forged press cannot
// choose either), and its outcomes say Published / Rejected by whom.
func TestPublishVerbButtonsAndOutcomes(t *testing.T) {
	db := pgtest.Open(t, context.Background())
	s := approvals.New(approvals.Options{Store: db, Messages: db, Approvers: []string{"telegram:500"}, Timeout: time.Minute})
	f := &fakeChat{}
	s.Attach(f)
	req := func(call string) tools.ApprovalRequest {
		return tools.ApprovalRequest{Tool: "publish_skill", Command: "skill: deploy\nfiles (1, 10 B):", Class: "mutating",
			Verb: tools.VerbPublish, Call: tools.Call{Channel: "telegram", ChatID: "700", UserID: "telegram:700",
				Session: "ops/telegram:700", Agent: "ops", ToolCallID: call}}
	}
	if _, done := decision(t, s, req("call-1")); done {
		t.Fatal("decided at once")
	}
	card := f.asked[0]
	var labels []string
	for _, b := range card.Buttons[0] {
		labels = append(labels, b.Label)
	}
	if strings.Join(labels, ",") != "Publish,Reject" {
		t.Fatalf("buttons = %v, want Publish, Reject", labels)
	}
	if !strings.Contains(card.Text, "wants to publish a skill") || !strings.Contains(card.Text, "skill: deploy") {
		t.Fatalf("card = %q", card.Text)
	}
	if f.roles[1] != "requester" || !strings.Contains(f.asked[1].Text, "to publish this skill") {
		t.Fatalf("requester note = %q", f.asked[1].Text)
	}
	id := approvalID(t, f)
	if got := f.press(t, s, "telegram:500", id, "a"); got != "This button is no longer active." {
		t.Fatalf("a forged Always allow press answered %q", got)
	}
	if got := f.press(t, s, "telegram:500", id, "o"); got != "Done: published." {
		t.Fatalf("Publish answered %q", got)
	}
	if len(f.finished) != 1 || !strings.Contains(f.finished[0], "Published by telegram:500") {
		t.Fatalf("outcome = %q", f.finished)
	}
	if d, done := decision(t, s, req("call-1")); !done || d != tools.AllowedOnce {
		t.Fatalf("decision = %v, %v", d, done)
	}

	if _, done := decision(t, s, req("call-2")); done {
		t.Fatal("decided at once")
	}
	f.mu.Lock()
	f.asked = f.asked[2:]
	f.mu.Unlock()
	if got := f.press(t, s, "telegram:500", approvalID(t, f), "d"); got != "Done: rejected." {
		t.Fatalf("Reject answered %q", got)
	}
	if !strings.Contains(f.finished[1], "Rejected by telegram:500") {
		t.Fatalf("outcome = %q", f.finished[1])
	}
	// No "Always allow" is looked up or honoured for a request with a verb.
	if res, ok := tools.AskApproval(context.Background(), slog.New(slog.DiscardHandler), alwaysYes{s}, req("call-3"), "skill"); ok || res.Waiting == nil {
		t.Fatalf("AskApproval with an always-allowed pattern = %+v, %v; want it asked", res, ok)
	}
}

// alwaysYes claims every pattern is always allowed.
type alwaysYes struct{ *approvals.Service }

func (alwaysYes) AlwaysAllowed(context.Context, string, string) (bool, error) { return true, nil }

// A quorum request to publish says that one Reject rejects, in the words
// of its buttons; an exec request keeps "one Deny denies".
func TestQuorumCardUsesTheVerbsWords(t *testing.T) {
	for _, tc := range []struct {
		verb, want string
	}{{tools.VerbPublish, "Needs 2 people to publish; one Reject rejects."}, {"", "Needs 2 people to allow; one Deny denies."}} {
		s, f := twoPerson(t, time.Minute, approvals.Rule{})
		req := execRequest("call-" + tc.verb)
		req.Verb = tc.verb
		if _, done := decision(t, s, req); done {
			t.Fatal("decided at once")
		}
		if !strings.Contains(f.asked[0].Text, tc.want) {
			t.Errorf("verb %q: card = %q, want %q", tc.verb, f.asked[0].Text, tc.want)
		}
	}
}
