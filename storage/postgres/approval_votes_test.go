package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// quorumApproval is a pending two-person approval.
func quorumApproval(t *testing.T, db *postgres.DB, id string) approvals.Approval {
	t.Helper()
	a := newApproval(id, "ops/telegram:-100", "call-"+id)
	a.Quorum, a.Approvers = 2, []string{"telegram:1", "telegram:2", "telegram:3"}
	a.EscalateAt, a.EscalateTo = a.CreatedAt.Add(time.Minute), []string{"telegram:9"}
	stored, created, err := db.CreateApproval(context.Background(), a)
	if err != nil || !created {
		t.Fatalf("CreateApproval = %v, %v", created, err)
	}
	return stored
}

func vote(person, choice string) approvals.Vote {
	return approvals.Vote{Person: person, Identity: person, Choice: choice}
}

func TestApprovalVotesDecideAtQuorum(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := quorumApproval(t, db, "ap-q")
	if a.Quorum != 2 || len(a.Approvers) != 3 || a.EscalateTo[0] != "telegram:9" || a.SelfApprove {
		t.Fatalf("stored rule = quorum %d approvers %q escalate %q self %v", a.Quorum, a.Approvers, a.EscalateTo, a.SelfApprove)
	}
	got, outcome, err := db.VoteApproval(ctx, a.ID, vote("telegram:1", approvals.StatusAllowedAlways))
	if err != nil || outcome != approvals.VoteCounted || got.Status != approvals.StatusPending || len(got.Votes) != 1 {
		t.Fatalf("first vote = %v, %v, status %s, votes %v", outcome, err, got.Status, got.Votes)
	}
	// The same person again, from another account mapped to them.
	again := approvals.Vote{Person: "telegram:1", Identity: "slack:U1", Choice: approvals.StatusAllowedOnce}
	if _, outcome, err := db.VoteApproval(ctx, a.ID, again); err != nil || outcome != approvals.VoteRepeated {
		t.Fatalf("repeated vote = %v, %v; want VoteRepeated", outcome, err)
	}
	got, outcome, err = db.VoteApproval(ctx, a.ID, vote("telegram:2", approvals.StatusAllowedOnce))
	if err != nil || outcome != approvals.VoteDecided {
		t.Fatalf("second vote = %v, %v; want VoteDecided", outcome, err)
	}
	// One vote chose once: the quorum allows once.
	if got.Status != approvals.StatusAllowedOnce || got.DecidedBy != "telegram:1, telegram:2" || len(got.Votes) != 2 {
		t.Fatalf("decided = %s by %q, votes %v", got.Status, got.DecidedBy, got.Votes)
	}
	if _, outcome, _ := db.VoteApproval(ctx, a.ID, vote("telegram:3", approvals.StatusDenied)); outcome != approvals.VoteClosed {
		t.Fatalf("vote after the decision = %v; want VoteClosed", outcome)
	}
	if _, _, err := db.VoteApproval(ctx, "nope", vote("telegram:1", approvals.StatusDenied)); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("vote on an unknown id = %v; want ErrNotFound", err)
	}
	if _, _, err := db.VoteApproval(ctx, a.ID, vote("telegram:1", approvals.StatusExpired)); err == nil {
		t.Fatal("a vote with a non-choice was accepted")
	}
}

func TestApprovalVoteAlwaysOnlyWhenAllChoseIt(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := quorumApproval(t, db, "ap-aa")
	for _, p := range []string{"telegram:1", "telegram:2"} {
		if _, _, err := db.VoteApproval(ctx, a.ID, vote(p, approvals.StatusAllowedAlways)); err != nil {
			t.Fatal(err)
		}
	}
	if got, _ := db.GetApproval(ctx, a.ID); got.Status != approvals.StatusAllowedAlways {
		t.Fatalf("two always votes decided %s, want allowed_always", got.Status)
	}
}

func TestApprovalOneDenyDenies(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := quorumApproval(t, db, "ap-d")
	if _, _, err := db.VoteApproval(ctx, a.ID, vote("telegram:1", approvals.StatusAllowedOnce)); err != nil {
		t.Fatal(err)
	}
	got, outcome, err := db.VoteApproval(ctx, a.ID, vote("telegram:2", approvals.StatusDenied))
	if err != nil || outcome != approvals.VoteDecided || got.Status != approvals.StatusDenied || got.DecidedBy != "telegram:2" {
		t.Fatalf("deny = %v, %v, %s by %s", outcome, err, got.Status, got.DecidedBy)
	}
}

func TestApprovalVoteAfterExpiryRecordsNothing(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := newApproval("ap-late", "s", "c")
	a.Quorum, a.ExpiresAt = 2, time.Now().Add(-time.Second)
	if _, _, err := db.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, outcome, err := db.VoteApproval(ctx, a.ID, vote("telegram:1", approvals.StatusAllowedOnce))
	if err != nil || outcome != approvals.VoteLate || got.Status != approvals.StatusPending || len(got.Votes) != 0 {
		t.Fatalf("late vote = %v, %v, %s, votes %v; want VoteLate and nothing recorded", outcome, err, got.Status, got.Votes)
	}
}

// TestApprovalConcurrentLastVotes: many people cast what could each be
// the quorum's last vote at once, on many approvals; each approval is
// decided by exactly one of them.
func TestApprovalConcurrentLastVotes(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for i := range 10 {
		a := quorumApproval(t, db, fmt.Sprintf("ap-race-%d", i))
		if _, _, err := db.VoteApproval(ctx, a.ID, vote("telegram:1", approvals.StatusAllowedOnce)); err != nil {
			t.Fatal(err)
		}
		var (
			wg      sync.WaitGroup
			mu      sync.Mutex
			decided int
		)
		start := make(chan struct{})
		for _, p := range []string{"telegram:2", "telegram:3"} {
			wg.Go(func() {
				<-start
				_, outcome, err := db.VoteApproval(ctx, a.ID, vote(p, approvals.StatusAllowedOnce))
				if err != nil {
					t.Error(err)
				}
				mu.Lock()
				defer mu.Unlock()
				if outcome == approvals.VoteDecided {
					decided++
				}
			})
		}
		close(start)
		wg.Wait()
		if decided != 1 {
			t.Fatalf("%s: %d votes decided it, want exactly 1", a.ID, decided)
		}
	}
}

func TestApprovalEscalatesOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := newApproval("ap-esc", "s", "c")
	a.Quorum, a.EscalateAt, a.EscalateTo = 2, time.Now().Add(-time.Second), []string{"telegram:9"}
	if _, _, err := db.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	quorumApproval(t, db, "ap-not-yet") // escalates in a minute
	due, err := db.DueEscalations(ctx)
	if err != nil || len(due) != 1 || due[0].ID != "ap-esc" {
		t.Fatalf("DueEscalations = %v, %v; want ap-esc", due, err)
	}
	var marked int
	for range 2 {
		got, ok, err := db.MarkEscalated(ctx, "ap-esc")
		if err != nil {
			t.Fatal(err)
		}
		if ok {
			marked++
			if got.EscalatedAt.IsZero() {
				t.Error("escalated approval has no escalation time")
			}
		}
	}
	if marked != 1 {
		t.Fatalf("marked escalated %d times, want once", marked)
	}
	if due, _ := db.DueEscalations(ctx); len(due) != 0 {
		t.Fatalf("still due after escalating: %v", due)
	}
}
