package postgres_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestGrantRequests: one pending request per subject and tool; of
// concurrent decisions one wins; approval adds the tool to the subject's
// grant in the same transaction (audited); a denial is returned for a day
// instead of a new request.
func TestGrantRequests(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	req := func(id, tool string) access.GrantRequest {
		return access.GrantRequest{ID: id, Server: "github", Tool: tool, Agent: "ops", SubjectKind: access.GrantUser,
			Subject: "telegram:42", Chat: channels.Address{Platform: "telegram", ChatID: "42"}}
	}
	first, created, err := db.OpenGrantRequest(ctx, req("req00000000000000001", "create_issue"), 24*time.Hour)
	if err != nil || !created || first.Status != access.StatusPending {
		t.Fatalf("open = %+v, %v, %v", first, created, err)
	}
	again, created, err := db.OpenGrantRequest(ctx, req("req00000000000000002", "create_issue"), 24*time.Hour)
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("second open = %+v, %v, %v; want the first back", again, created, err)
	}

	var wg sync.WaitGroup
	wins := make(chan string, 2)
	for _, by := range []string{"telegram:1", "telegram:2"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, changed, err := db.DecideGrantRequest(ctx, first.ID, access.StatusApproved, by); err == nil && changed {
				wins <- by
			}
		}()
	}
	wg.Wait()
	close(wins)
	if n := len(wins); n != 1 {
		t.Fatalf("%d decisions won; want exactly one", n)
	}
	grants, err := db.GrantsFor(ctx, "github", "someone-else", "telegram:42")
	if err != nil || len(grants) != 1 || !slices.Equal(grants[0].Allow, []string{"create_issue"}) {
		t.Fatalf("grants = %+v, %v", grants, err)
	}
	// A second tool, approved, joins the same grant.
	second, _, _ := db.OpenGrantRequest(ctx, req("req00000000000000003", "list_repos"), 24*time.Hour)
	if _, _, err := db.DecideGrantRequest(ctx, second.ID, access.StatusApproved, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	grants, _ = db.GrantsFor(ctx, "github", "ops", "telegram:42")
	if len(grants) != 1 || !slices.Equal(grants[0].Allow, []string{"create_issue", "list_repos"}) {
		t.Fatalf("grants after the second approval = %+v", grants)
	}
	// A denial stands for a day.
	third, _, _ := db.OpenGrantRequest(ctx, req("req00000000000000004", "delete_repo"), 24*time.Hour)
	if _, _, err := db.DecideGrantRequest(ctx, third.ID, access.StatusDenied, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	denied, created, err := db.OpenGrantRequest(ctx, req("req00000000000000005", "delete_repo"), 24*time.Hour)
	if err != nil || created || denied.Status != access.StatusDenied {
		t.Fatalf("asking after a denial = %+v, %v, %v", denied, created, err)
	}
	var audited int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM audit_log WHERE action IN ('grant.requested', 'grant.decided')`).Scan(&audited); err != nil {
		t.Fatal(err)
	}
	if audited != 6 { // 3 requests + 3 decisions
		t.Fatalf("audit has %d grant entries, want 6", audited)
	}
}
