package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// newApproval returns a pending approval expiring in an hour, with times at
// the microsecond precision PostgreSQL stores.
func newApproval(id, session, toolCallID string) approvals.Approval {
	now := time.Now().Truncate(time.Microsecond)
	return approvals.Approval{
		ID:         id,
		Tool:       "exec",
		Command:    "ls -la /srv",
		Cwd:        "/srv",
		Pattern:    "ls -la /srv",
		Agent:      "ops",
		Session:    session,
		ToolCallID: toolCallID,
		Requester:  "telegram:42",
		Chat:       channels.Address{Platform: "telegram", ChatID: "-100", ThreadID: "5"},
		CreatedAt:  now,
		ExpiresAt:  now.Add(time.Hour),
	}
}

// sameApproval reports whether a and b are equal, comparing times as
// instants.
func sameApproval(a, b approvals.Approval) bool {
	if !a.CreatedAt.Equal(b.CreatedAt) || !a.ExpiresAt.Equal(b.ExpiresAt) || !a.DecidedAt.Equal(b.DecidedAt) {
		return false
	}
	a.CreatedAt, a.ExpiresAt, a.DecidedAt = time.Time{}, time.Time{}, time.Time{}
	b.CreatedAt, b.ExpiresAt, b.DecidedAt = time.Time{}, time.Time{}, time.Time{}
	return reflect.DeepEqual(a, b)
}

// auditOf returns the audit entries about subject (kind, id), newest first.
func auditOf(t *testing.T, db *postgres.DB, kind, id string) []postgres.AuditEntry {
	t.Helper()
	all, err := db.Audit(context.Background(), 10000)
	if err != nil {
		t.Fatal(err)
	}
	var out []postgres.AuditEntry
	for _, e := range all {
		if e.SubjectKind == kind && e.SubjectID == id {
			out = append(out, e)
		}
	}
	return out
}

// countAction counts entries with action.
func countAction(entries []postgres.AuditEntry, action string) int {
	n := 0
	for _, e := range entries {
		if e.Action == action {
			n++
		}
	}
	return n
}

func TestApprovalWarningsRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := newApproval("ap-w", "ops/telegram:-100", "call_w")
	a.Warnings = []string{"installs a crontab", "LD_PRELOAD loads a library\x00"}
	stored, _, err := db.CreateApproval(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := db.GetApproval(ctx, "ap-w")
	want := []string{"installs a crontab", "LD_PRELOAD loads a library\uFFFD"}
	if err != nil || !reflect.DeepEqual(got.Warnings, want) || !reflect.DeepEqual(stored.Warnings, want) {
		t.Errorf("warnings stored %q, read %q (%v); want %q", stored.Warnings, got.Warnings, err, want)
	}
}

func TestApprovalRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := newApproval("ap-1", "ops/telegram:-100", "call_1")
	a.Status = approvals.StatusAllowedOnce // ignored: a new approval is pending
	stored, created, err := db.CreateApproval(ctx, a)
	if err != nil || !created {
		t.Fatalf("CreateApproval = %v, %v; want created", created, err)
	}
	want := a
	want.Status = approvals.StatusPending
	want.Quorum = 1 // no quorum given: one person decides
	if !sameApproval(stored, want) {
		t.Errorf("stored = %+v\nwant     %+v", stored, want)
	}
	got, err := db.GetApproval(ctx, "ap-1")
	if err != nil || !sameApproval(got, want) {
		t.Errorf("GetApproval = %+v, %v\nwant        %+v", got, err, want)
	}
	if _, err := db.GetApproval(ctx, "nope"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("GetApproval(unknown) error = %v, want ErrNotFound", err)
	}

	entries := auditOf(t, db, approvals.Kind, "ap-1")
	if len(entries) != 1 || entries[0].Action != postgres.ActionApprovalRequested || entries[0].Actor != "telegram:42" {
		t.Fatalf("audit = %+v, want one approval.requested by telegram:42", entries)
	}
	if entries[0].Detail["tool"] != "exec" || entries[0].At.IsZero() {
		t.Errorf("audit entry = %+v, want tool exec and a time", entries[0])
	}

	// A zero CreatedAt is filled in by the database.
	b := newApproval("ap-2", "ops/telegram:-100", "call_2")
	b.CreatedAt = time.Time{}
	stored, _, err = db.CreateApproval(ctx, b)
	if err != nil || stored.CreatedAt.IsZero() {
		t.Errorf("CreateApproval without CreatedAt = %v, %v; want a creation time", stored.CreatedAt, err)
	}

	decided, ok, err := db.DecideApproval(ctx, "ap-1", approvals.StatusAllowedAlways, "telegram:7")
	if err != nil || !ok {
		t.Fatalf("DecideApproval = %v, %v; want decided", ok, err)
	}
	if decided.Status != approvals.StatusAllowedAlways || decided.DecidedBy != "telegram:7" || decided.DecidedAt.IsZero() {
		t.Errorf("decided = %+v", decided)
	}
	if got, _ := db.GetApproval(ctx, "ap-1"); !sameApproval(got, decided) {
		t.Errorf("GetApproval after decision = %+v, want %+v", got, decided)
	}
	if _, _, err := db.DecideApproval(ctx, "nope", approvals.StatusDenied, "telegram:7"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("DecideApproval(unknown) error = %v, want ErrNotFound", err)
	}
}

func TestCreateApprovalValidates(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for name, mutate := range map[string]func(*approvals.Approval){
		"no id":     func(a *approvals.Approval) { a.ID = "" },
		"no tool":   func(a *approvals.Approval) { a.Tool = "" },
		"no expiry": func(a *approvals.Approval) { a.ExpiresAt = time.Time{} },
	} {
		a := newApproval("ap-"+name, "s", "c-"+name)
		mutate(&a)
		if _, _, err := db.CreateApproval(ctx, a); err == nil {
			t.Errorf("%s: CreateApproval succeeded", name)
		}
	}
	if list, err := db.PendingApprovals(ctx); err != nil || len(list) != 0 {
		t.Errorf("after refused creates: pending = %v, %v; want none", list, err)
	}
}

func TestCreateApprovalIdempotentPerToolCall(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	first, created, err := db.CreateApproval(ctx, newApproval("ap-1", "s", "call_1"))
	if err != nil || !created {
		t.Fatalf("first CreateApproval = %v, %v", created, err)
	}
	if _, ok, err := db.DecideApproval(ctx, "ap-1", approvals.StatusDenied, "telegram:7"); err != nil || !ok {
		t.Fatalf("deny = %v, %v", ok, err)
	}
	again, created, err := db.CreateApproval(ctx, newApproval("ap-other", "s", "call_1"))
	if err != nil || created {
		t.Fatalf("second CreateApproval = %v, %v; want the existing one", created, err)
	}
	if again.ID != first.ID || again.Status != approvals.StatusDenied {
		t.Errorf("second CreateApproval returned %s (%s), want %s as decided (denied)", again.ID, again.Status, first.ID)
	}
	if _, err := db.GetApproval(ctx, "ap-other"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("the duplicate was stored: %v", err)
	}

	// The same tool call id with another command never returns the old decision.
	other := newApproval("ap-3", "s", "call_1")
	other.Command = "rm -rf /srv"
	if got, _, err := db.CreateApproval(ctx, other); err == nil {
		t.Errorf("CreateApproval for a reused tool call id with another command = %+v, want an error", got)
	}

	// Another tool call or another session is a new approval.
	if _, created, err := db.CreateApproval(ctx, newApproval("ap-4", "s", "call_2")); err != nil || !created {
		t.Errorf("other tool call: created %v, %v", created, err)
	}
	if _, created, err := db.CreateApproval(ctx, newApproval("ap-5", "s2", "call_1")); err != nil || !created {
		t.Errorf("other session: created %v, %v", created, err)
	}
	// Approvals without a tool call id are never merged.
	for _, id := range []string{"ap-6", "ap-7"} {
		if _, created, err := db.CreateApproval(ctx, newApproval(id, "", "")); err != nil || !created {
			t.Errorf("approval %s without tool call: created %v, %v", id, created, err)
		}
	}
	if n := countAction(auditOf(t, db, approvals.Kind, "ap-1"), postgres.ActionApprovalRequested); n != 1 {
		t.Errorf("ap-1 has %d approval.requested records, want 1", n)
	}
}

func TestCreateApprovalConcurrent(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	results := atOnce(10, func(i int) (approvals.Approval, bool, error) {
		return db.CreateApproval(ctx, newApproval(fmt.Sprintf("ap-%d", i), "s", "call_1"))
	})
	created := 0
	var winner string
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("create %d: %v", i, r.err)
		}
		if r.ok {
			created++
			winner = r.row.ID
		}
	}
	if created != 1 {
		t.Fatalf("%d creates reported created, want exactly 1", created)
	}
	for i, r := range results {
		if r.row.ID != winner {
			t.Errorf("create %d returned %s, want the stored %s", i, r.row.ID, winner)
		}
	}
	var rows int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM approvals`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("%d approval rows, want 1", rows)
	}
}

func TestDecideApprovalRaceHasOneWinner(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	statuses := []string{approvals.StatusAllowedOnce, approvals.StatusDenied, approvals.StatusAllowedAlways, approvals.StatusExpired}
	for _, n := range []int{2, 4, 6, 8, 10} {
		id := fmt.Sprintf("race-%d", n)
		if _, _, err := db.CreateApproval(ctx, newApproval(id, "s", id)); err != nil {
			t.Fatal(err)
		}
		results := atOnce(n, func(i int) (approvals.Approval, bool, error) {
			return db.DecideApproval(ctx, id, statuses[i%len(statuses)], fmt.Sprintf("telegram:%d", i))
		})

		winners := 0
		var status, by string
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("%s: decision %d: %v", id, i, r.err)
			}
			if r.ok {
				winners++
				status, by = statuses[i%len(statuses)], fmt.Sprintf("telegram:%d", i)
			}
		}
		if winners != 1 {
			t.Fatalf("%s: %d of %d decisions won, want exactly 1", id, winners, n)
		}
		for i, r := range results {
			if r.row.Status != status || r.row.DecidedBy != by {
				t.Errorf("%s: decision %d saw %s by %s, want the winner's %s by %s", id, i, r.row.Status, r.row.DecidedBy, status, by)
			}
		}
		if got, err := db.GetApproval(ctx, id); err != nil || got.Status != status || got.DecidedBy != by {
			t.Errorf("%s: stored %s by %s (%v), want %s by %s", id, got.Status, got.DecidedBy, err, status, by)
		}
		entries := auditOf(t, db, approvals.Kind, id)
		if c := countAction(entries, postgres.ActionApprovalDecided); c != 1 {
			t.Fatalf("%s: %d approval.decided records, want 1", id, c)
		}
		for _, e := range entries {
			if e.Action == postgres.ActionApprovalDecided && (e.Actor != by || e.Detail["status"] != status) {
				t.Errorf("%s: audit says %v by %s, want %s by %s", id, e.Detail["status"], e.Actor, status, by)
			}
		}
	}
}

func TestDecideApprovalLatePressLosesToExpiry(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a := newApproval("late", "s", "call_1")
	a.CreatedAt = a.CreatedAt.Add(-2 * time.Hour)
	a.ExpiresAt = a.CreatedAt.Add(time.Hour) // an hour ago
	if _, _, err := db.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.DecideApproval(ctx, "late", approvals.StatusAllowedOnce, "telegram:7")
	if err != nil || ok {
		t.Fatalf("late press = %v, %v; want refused", ok, err)
	}
	if got.Status != approvals.StatusPending || got.DecidedBy != "" {
		t.Errorf("late press left %s by %q, want still pending", got.Status, got.DecidedBy)
	}
	got, ok, err = db.DecideApproval(ctx, "late", approvals.StatusExpired, "system")
	if err != nil || !ok || got.Status != approvals.StatusExpired || got.DecidedBy != "system" {
		t.Fatalf("expiry = %+v, %v, %v; want expired by system", got, ok, err)
	}
	got, ok, err = db.DecideApproval(ctx, "late", approvals.StatusDenied, "telegram:7")
	if err != nil || ok || got.Status != approvals.StatusExpired {
		t.Errorf("press after expiry = %s, %v, %v; want refused, still expired", got.Status, ok, err)
	}
	entries := auditOf(t, db, approvals.Kind, "late")
	if c := countAction(entries, postgres.ActionApprovalDecided); c != 1 || entries[0].Detail["status"] != approvals.StatusExpired {
		t.Errorf("audit = %+v, want one decision: expired", entries)
	}
}

func TestDecideApprovalExpireAfterDecision(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if _, _, err := db.CreateApproval(ctx, newApproval("ap", "s", "call_1")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.DecideApproval(ctx, "ap", approvals.StatusDenied, "telegram:7"); err != nil || !ok {
		t.Fatalf("deny = %v, %v", ok, err)
	}
	got, ok, err := db.DecideApproval(ctx, "ap", approvals.StatusExpired, "system")
	if err != nil || ok || got.Status != approvals.StatusDenied || got.DecidedBy != "telegram:7" {
		t.Errorf("expiry after decision = %s by %s, %v, %v; want refused, still denied by telegram:7", got.Status, got.DecidedBy, ok, err)
	}
	for _, bad := range []string{approvals.StatusPending, access.StatusApproved, ""} {
		if _, _, err := db.DecideApproval(ctx, "ap", bad, "telegram:7"); err == nil {
			t.Errorf("DecideApproval with status %q succeeded", bad)
		}
	}
	if _, _, err := db.DecideApproval(ctx, "ap", approvals.StatusDenied, ""); err == nil {
		t.Error("DecideApproval without a decider succeeded")
	}
}

func TestPendingApprovalsOldestFirst(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	base := time.Now().Truncate(time.Microsecond)
	for i, id := range []string{"c", "a", "b"} {
		a := newApproval(id, "s", id)
		a.CreatedAt = base.Add(time.Duration([]int{3, 1, 2}[i]) * time.Second)
		if _, _, err := db.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := db.DecideApproval(ctx, "b", approvals.StatusAllowedOnce, "telegram:7"); err != nil {
		t.Fatal(err)
	}
	list, err := db.PendingApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, a := range list {
		ids = append(ids, a.ID)
		if a.Status != approvals.StatusPending {
			t.Errorf("%s listed as pending with status %s", a.ID, a.Status)
		}
	}
	if !reflect.DeepEqual(ids, []string{"a", "c"}) {
		t.Errorf("pending = %v, want [a c]", ids)
	}
}

// TestDueApprovals: the due list holds pending approvals whose time is up;
// next is the earliest expiry of the other pending ones, zero when there
// are none, and a time already past when the list is cut short.
func TestDueApprovals(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	due, next, err := db.DueApprovals(ctx)
	if err != nil || len(due) != 0 || !next.IsZero() {
		t.Fatalf("DueApprovals with none = %d, %v, %v; want none, zero", len(due), next, err)
	}
	now := time.Now().Truncate(time.Microsecond)
	for id, expires := range map[string]time.Duration{"late": -time.Minute, "soon": time.Minute, "later": time.Hour, "decided": 30 * time.Second} {
		a := newApproval(id, "s", id)
		a.ExpiresAt = now.Add(expires)
		if _, _, err := db.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := db.DecideApproval(ctx, "decided", approvals.StatusDenied, "telegram:7"); err != nil {
		t.Fatal(err)
	}
	due, next, err = db.DueApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 1 || due[0].ID != "late" {
		t.Errorf("due = %v, want [late]", due)
	}
	if !next.Equal(now.Add(time.Minute)) {
		t.Errorf("next = %v, want %v (soon's expiry; not decided's)", next, now.Add(time.Minute))
	}
	for _, id := range []string{"late", "soon", "later"} {
		if _, _, err := db.DecideApproval(ctx, id, approvals.StatusExpired, "system"); err != nil {
			t.Fatal(err)
		}
	}
	if due, next, err = db.DueApprovals(ctx); err != nil || len(due) != 0 || !next.IsZero() {
		t.Fatalf("DueApprovals with none pending = %d, %v, %v; want none, zero", len(due), next, err)
	}

	// More due than one call lists: next says to look again at once.
	for i := range 201 {
		id := fmt.Sprintf("many-%03d", i)
		a := newApproval(id, "s", id)
		a.ExpiresAt = now.Add(-time.Second)
		if _, _, err := db.CreateApproval(ctx, a); err != nil {
			t.Fatal(err)
		}
	}
	a := newApproval("future", "s", "future")
	if _, _, err := db.CreateApproval(ctx, a); err != nil {
		t.Fatal(err)
	}
	due, next, err = db.DueApprovals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(due) != 200 {
		t.Errorf("due lists %d, want 200 (the limit)", len(due))
	}
	if next.IsZero() || next.After(time.Now()) {
		t.Errorf("next = %v with more due than listed; want a time already past", next)
	}
}

func TestAllowAlwaysExactMatchOnly(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if ok, err := db.IsAlwaysAllowed(ctx, "exec", "echo a"); err != nil || ok {
		t.Fatalf("before AllowAlways: %v, %v; want false", ok, err)
	}
	if err := db.AllowAlways(ctx, "exec", "echo a", "telegram:7"); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.IsAlwaysAllowed(ctx, "exec", "echo a"); err != nil || !ok {
		t.Errorf("IsAlwaysAllowed(echo a) = %v, %v; want true", ok, err)
	}
	for _, c := range []struct{ tool, pattern string }{
		{"exec", "echo a; id"},
		{"exec", "echo a && id"},
		{"exec", "echo"},
		{"exec", "echo a "},
		{"exec", "ECHO A"},
		{"exec", ""},
		{"shell", "echo a"},
	} {
		if ok, err := db.IsAlwaysAllowed(ctx, c.tool, c.pattern); err != nil || ok {
			t.Errorf("IsAlwaysAllowed(%s, %q) = %v, %v; want false", c.tool, c.pattern, ok, err)
		}
	}
	if err := db.AllowAlways(ctx, "exec", "", "telegram:7"); err == nil {
		t.Error("AllowAlways with an empty pattern succeeded")
	}

	// Allowing again keeps the first record and audits both.
	if err := db.AllowAlways(ctx, "exec", "echo a", "telegram:8"); err != nil {
		t.Fatal(err)
	}
	var by string
	if err := db.Pool().QueryRow(ctx, `SELECT created_by FROM allow_always WHERE tool = 'exec' AND pattern = 'echo a'`).Scan(&by); err != nil {
		t.Fatal(err)
	}
	if by != "telegram:7" {
		t.Errorf("created_by = %s after a repeat, want the first, telegram:7", by)
	}
	entries := auditOf(t, db, postgres.SubjectAllowAlways, "exec")
	if len(entries) != 2 || entries[0].Actor != "telegram:8" || entries[1].Actor != "telegram:7" ||
		entries[0].Detail["pattern"] != "echo a" || entries[0].Action != postgres.ActionApprovalAllowAlways {
		t.Errorf("allow-always audit = %+v, want telegram:8 then telegram:7 allowing echo a", entries)
	}
}

func TestMigration00002Down(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	sqlDB := stdlib.OpenDBFromPool(db.Pool())
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, os.DirFS("migrations"),
		goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = provider.Close() })
	tables := []string{"approvals", "allow_always", "access_requests", "decision_messages", "audit_log"}
	exists := func(table string) bool {
		var ok bool
		if err := db.Pool().QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, table).Scan(&ok); err != nil {
			t.Fatal(err)
		}
		return ok
	}
	for _, table := range tables {
		if !exists(table) {
			t.Errorf("table %s missing after Migrate", table)
		}
	}
	if _, err := provider.DownTo(ctx, 1); err != nil {
		t.Fatalf("down to 1: %v", err)
	}
	for _, table := range tables {
		if exists(table) {
			t.Errorf("table %s still exists after down", table)
		}
	}
	if !exists("outbox") {
		t.Error("down of 00002 dropped outbox")
	}
	if _, err := provider.UpTo(ctx, 2); err != nil {
		t.Fatalf("up again: %v", err)
	}
	for _, table := range tables {
		if !exists(table) {
			t.Errorf("table %s missing after up again", table)
		}
	}
}
