package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestAuditNewestFirstAndLimited(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if entries, err := db.Audit(ctx, 10); err != nil || len(entries) != 0 {
		t.Fatalf("Audit of an empty log = %v, %v; want none", entries, err)
	}
	for i := range 3 {
		if err := db.AllowAlways(ctx, "exec", fmt.Sprintf("echo %d", i), fmt.Sprintf("telegram:%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	entries, err := db.Audit(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("Audit(2) returned %d entries", len(entries))
	}
	for i, e := range entries {
		wantActor, wantPattern := fmt.Sprintf("telegram:%d", 2-i), fmt.Sprintf("echo %d", 2-i)
		if e.Actor != wantActor || e.Detail["pattern"] != wantPattern || e.Action != postgres.ActionApprovalAllowAlways ||
			e.SubjectKind != postgres.SubjectAllowAlways || e.SubjectID != "exec" {
			t.Errorf("entry %d = %+v, want %s allowing %q", i, e, wantActor, wantPattern)
		}
		if time.Since(e.At) > time.Hour || e.At.After(time.Now().Add(time.Hour)) {
			t.Errorf("entry %d at %v, want about now", i, e.At)
		}
	}
	if entries, err := db.Audit(ctx, 0); err != nil || len(entries) != 0 {
		t.Errorf("Audit(0) = %v, %v; want none", entries, err)
	}
}

func TestAuditStoresUnstorableText(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	// NUL and invalid UTF-8 in a pattern (which lands in the JSON detail)
	// must not fail the decision.
	pattern := "printf 'a\x00b\xff'"
	if err := db.AllowAlways(ctx, "exec", pattern, "telegram:1"); err != nil {
		t.Fatalf("AllowAlways with NUL in the pattern: %v", err)
	}
	entries, err := db.Audit(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Detail["pattern"] != "printf 'a\uFFFDb\uFFFD'" {
		t.Errorf("audit = %+v, want the pattern with replacement characters", entries)
	}
	if _, err := db.Revoke(ctx, "telegram:\x00", "telegram:1"); err != nil {
		t.Errorf("Revoke with NUL in the identity: %v", err)
	}
	if got := auditOf(t, db, postgres.SubjectIdentity, "telegram:\uFFFD"); len(got) != 1 || got[0].Action != postgres.ActionAccessRevoked {
		t.Errorf("audit of the revoke = %+v, want one access.revoked of telegram:\uFFFD", got)
	}
}
