package postgres_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestGrantRequestQuorum: a request asked under a rule keeps its quorum
// and approvers; a vote short of the quorum grants nothing; a person votes
// once whichever account presses; of concurrent last votes exactly one
// decides and the grant is written once, in that transaction; a vote on a
// decided request changes nothing; one deny denies.
func TestGrantRequestQuorum(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	open := func(id, tool string) access.GrantRequest {
		r, created, err := db.OpenGrantRequest(ctx, access.GrantRequest{ID: id, Server: "github", Tool: tool, Agent: "ops",
			SubjectKind: access.GrantUser, Subject: "telegram:42", Quorum: 3,
			Approvers: []string{"telegram:1", "telegram:2", "telegram:3", "slack:U1"}}, 24*time.Hour)
		if err != nil || !created {
			t.Fatalf("open %s = %+v, %v, %v", id, r, created, err)
		}
		return r
	}
	vote := func(id, person, identity, choice string) (access.GrantRequest, quorum.Outcome) {
		t.Helper()
		r, outcome, err := db.VoteGrantRequest(ctx, id, quorum.Vote{Person: person, Identity: identity, Choice: choice})
		if err != nil {
			t.Fatalf("vote by %s: %v", identity, err)
		}
		return r, outcome
	}
	req := open("greq0000000000000001", "create_issue")
	if req.Quorum != 3 || !slices.Equal(req.Approvers, []string{"telegram:1", "telegram:2", "telegram:3", "slack:U1"}) || req.SelfApprove {
		t.Fatalf("stored rule = quorum %d approvers %q self %v", req.Quorum, req.Approvers, req.SelfApprove)
	}
	if r, outcome := vote(req.ID, "person:alice", "telegram:1", access.StatusApproved); outcome != quorum.Counted ||
		len(r.Votes) != 1 || r.Votes[0].Identity != "telegram:1" || r.Status != access.StatusPending {
		t.Fatalf("first vote = %v, %+v", outcome, r)
	}
	if _, outcome := vote(req.ID, "person:alice", "slack:U1", access.StatusApproved); outcome != quorum.Repeated {
		t.Fatalf("alice's second account = %v, want repeated", outcome)
	}
	if grants, _ := db.GrantsFor(ctx, "github", "ops", "telegram:42"); len(grants) != 0 {
		t.Fatalf("grants before the quorum = %+v", grants)
	}

	// telegram:2 makes two of three; telegram:3 and a fourth person race
	// for the last vote.
	vote(req.ID, "telegram:2", "telegram:2", access.StatusApproved)
	var wg sync.WaitGroup
	decided := make(chan access.GrantRequest, 2)
	for _, by := range []string{"telegram:3", "telegram:4"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r, outcome, err := db.VoteGrantRequest(ctx, req.ID, quorum.Vote{Person: by, Identity: by, Choice: access.StatusApproved}); err == nil && outcome == quorum.Decided {
				decided <- r
			}
		}()
	}
	wg.Wait()
	close(decided)
	if n := len(decided); n != 1 {
		t.Fatalf("%d last votes decided; want exactly one", n)
	}
	won := <-decided
	if won.Status != access.StatusApproved || len(won.Votes) != 3 {
		t.Fatalf("decided request = %+v", won)
	}
	grants, err := db.GrantsFor(ctx, "github", "ops", "telegram:42")
	if err != nil || len(grants) != 1 || !slices.Equal(grants[0].Allow, []string{"create_issue"}) {
		t.Fatalf("grants after the quorum = %+v, %v", grants, err)
	}
	if _, outcome := vote(req.ID, "telegram:9", "telegram:9", access.StatusDenied); outcome != quorum.Closed {
		t.Fatalf("deny after the decision = %v, want closed", outcome)
	}
	if got, _ := db.GetGrantRequest(ctx, req.ID); got.Status != access.StatusApproved {
		t.Fatalf("a late deny changed the request: %+v", got)
	}

	// One deny denies, whatever the approvals before it.
	other := open("greq0000000000000002", "delete_repo")
	vote(other.ID, "telegram:1", "telegram:1", access.StatusApproved)
	if r, outcome := vote(other.ID, "telegram:2", "telegram:2", access.StatusDenied); outcome != quorum.Decided ||
		r.Status != access.StatusDenied || r.DecidedBy != "telegram:2" {
		t.Fatalf("deny = %v, %+v", outcome, r)
	}
	if grants, _ := db.GrantsFor(ctx, "github", "ops", "telegram:42"); slices.Contains(grants[0].Allow, "delete_repo") {
		t.Fatalf("a denied request granted: %+v", grants)
	}
	var audited int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action = 'grant.voted'`).Scan(&audited); err != nil {
		t.Fatal(err)
	}
	if audited != 5 { // telegram:1, :2, the winner of the race; telegram:1, :2 on the second
		t.Fatalf("audit has %d grant votes, want 5", audited)
	}
	// Votes go with their request.
	if _, err := db.Pool().Exec(ctx, `DELETE FROM grant_requests WHERE id = $1`, other.ID); err != nil {
		t.Fatal(err)
	}
	var left int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM decision_votes WHERE subject_id = $1`, other.ID).Scan(&left); err != nil || left != 0 {
		t.Fatalf("%d votes outlived their request (%v)", left, err)
	}
}

// TestGrantVoteBadInput: a vote with an unknown choice or no voter is
// refused before anything is stored; an unknown request is not found.
func TestGrantVoteBadInput(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	r, _, err := db.OpenGrantRequest(ctx, access.GrantRequest{ID: "greq0000000000000003", Server: "github", Tool: "x",
		Agent: "ops", SubjectKind: access.GrantAgent, Subject: "ops", Quorum: 2}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []quorum.Vote{
		{Person: "telegram:1", Identity: "telegram:1", Choice: "allowed_always"},
		{Identity: "telegram:1", Choice: access.StatusApproved},
	} {
		if _, _, err := db.VoteGrantRequest(ctx, r.ID, v); err == nil {
			t.Errorf("vote %+v was accepted", v)
		}
	}
	if _, _, err := db.VoteGrantRequest(ctx, "nosuchrequest", quorum.Vote{Person: "telegram:1", Identity: "telegram:1",
		Choice: access.StatusApproved}); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("vote on an unknown request: %v, want not found", err)
	}
	if got, _ := db.GetGrantRequest(ctx, r.ID); len(got.Votes) != 0 || got.Status != access.StatusPending {
		t.Errorf("bad votes changed the request: %+v", got)
	}
}
