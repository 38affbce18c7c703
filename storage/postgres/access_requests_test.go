package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// newAccessRequest returns a request of telegram user uid from a private
// chat.
func newAccessRequest(id, uid string) access.Request {
	return access.Request{
		ID:          id,
		Identity:    "telegram:" + uid,
		DisplayName: "User " + uid,
		Chat:        channels.Address{Platform: "telegram", ChatID: uid},
		CreatedAt:   time.Now().Truncate(time.Microsecond),
	}
}

func TestAccessRequestRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	r := newAccessRequest("ar-1", "42")
	r.Chat.ThreadID = "9"
	r.Status = access.StatusApproved // ignored: a new request is pending
	stored, created, err := db.OpenAccessRequest(ctx, r, 10, time.Hour)
	if err != nil || !created {
		t.Fatalf("OpenAccessRequest = %v, %v; want created", created, err)
	}
	if stored.ID != "ar-1" || stored.Identity != "telegram:42" || stored.DisplayName != "User 42" ||
		stored.Chat != r.Chat || stored.Status != access.StatusPending || !stored.CreatedAt.Equal(r.CreatedAt) ||
		stored.DecidedBy != "" || !stored.DecidedAt.IsZero() {
		t.Errorf("stored = %+v, from %+v", stored, r)
	}
	got, err := db.GetAccessRequest(ctx, "ar-1")
	if err != nil || got.ID != stored.ID || got.Chat != stored.Chat || got.Status != access.StatusPending {
		t.Errorf("GetAccessRequest = %+v, %v; want %+v", got, err, stored)
	}
	if _, err := db.GetAccessRequest(ctx, "nope"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("GetAccessRequest(unknown) error = %v, want ErrNotFound", err)
	}
	entries := auditOf(t, db, access.KindRequest, "ar-1")
	if len(entries) != 1 || entries[0].Action != postgres.ActionAccessRequested || entries[0].Actor != "telegram:42" {
		t.Errorf("audit = %+v, want one access.requested by telegram:42", entries)
	}

	for name, mutate := range map[string]func(*access.Request){
		"no id":       func(r *access.Request) { r.ID = "" },
		"no identity": func(r *access.Request) { r.Identity = "" },
		"no platform": func(r *access.Request) { r.Chat.Platform = "" },
	} {
		r := newAccessRequest("ar-"+name, "77")
		mutate(&r)
		if _, _, err := db.OpenAccessRequest(ctx, r, 10, time.Hour); err == nil {
			t.Errorf("%s: OpenAccessRequest succeeded", name)
		}
	}
}

func TestOpenAccessRequestOnePendingPerIdentity(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	results := atOnce(10, func(i int) (access.Request, bool, error) {
		return db.OpenAccessRequest(ctx, newAccessRequest(fmt.Sprintf("ar-%d", i), "42"), 100, time.Hour)
	})
	created := 0
	var winner string
	for i, r := range results {
		if r.err != nil {
			t.Fatalf("open %d: %v", i, r.err)
		}
		if r.ok {
			created++
			winner = r.row.ID
		}
	}
	if created != 1 {
		t.Fatalf("%d opens created a request, want exactly 1", created)
	}
	for i, r := range results {
		if r.row.ID != winner || r.row.Status != access.StatusPending {
			t.Errorf("open %d returned %s (%s), want pending %s", i, r.row.ID, r.row.Status, winner)
		}
	}
	var rows int
	if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM access_requests`).Scan(&rows); err != nil {
		t.Fatal(err)
	}
	if rows != 1 {
		t.Errorf("%d access request rows, want 1", rows)
	}
}

func TestOpenAccessRequestCooldownAfterDenial(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if _, _, err := db.OpenAccessRequest(ctx, newAccessRequest("ar-1", "42"), 10, time.Hour); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := db.DecideAccessRequest(ctx, "ar-1", access.StatusDenied, "telegram:1"); err != nil || !ok {
		t.Fatalf("deny = %v, %v", ok, err)
	}
	got, created, err := db.OpenAccessRequest(ctx, newAccessRequest("ar-2", "42"), 10, time.Hour)
	if err != nil || created || got.ID != "ar-1" || got.Status != access.StatusDenied {
		t.Fatalf("open within cooldown = %s (%s), %v, %v; want the denied ar-1", got.ID, got.Status, created, err)
	}
	// Once the cooldown has passed they may ask again.
	if _, err := db.Pool().Exec(ctx, `UPDATE access_requests SET decided_at = now() - interval '2 hours' WHERE id = 'ar-1'`); err != nil {
		t.Fatal(err)
	}
	got, created, err = db.OpenAccessRequest(ctx, newAccessRequest("ar-3", "42"), 10, time.Hour)
	if err != nil || !created || got.ID != "ar-3" || got.Status != access.StatusPending {
		t.Errorf("open after cooldown = %s (%s), %v, %v; want new pending ar-3", got.ID, got.Status, created, err)
	}
	// An approved request does not block a new one (e.g. after a revoke).
	if _, _, err := db.DecideAccessRequest(ctx, "ar-3", access.StatusApproved, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	if _, created, err := db.OpenAccessRequest(ctx, newAccessRequest("ar-4", "42"), 10, time.Hour); err != nil || !created {
		t.Errorf("open after approval = %v, %v; want created", created, err)
	}
}

func TestOpenAccessRequestCapPerPlatform(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	const maxPending, n = 3, 10
	results := atOnce(n, func(i int) (access.Request, bool, error) {
		return db.OpenAccessRequest(ctx, newAccessRequest(fmt.Sprintf("ar-%d", i), fmt.Sprint(100+i)), maxPending, time.Hour)
	})
	made, refused := 0, 0
	for i, r := range results {
		switch {
		case r.err == nil && r.ok:
			made++
		case errors.Is(r.err, access.ErrTooManyPending):
			refused++
		default:
			t.Errorf("open %d = %v, %v; want created or ErrTooManyPending", i, r.ok, r.err)
		}
	}
	if made != maxPending || refused != n-maxPending {
		t.Fatalf("%d created, %d refused; want %d and %d", made, refused, maxPending, n-maxPending)
	}

	// Someone already pending gets their request back even at the cap.
	var pendingID string
	if err := db.Pool().QueryRow(ctx, `SELECT id FROM access_requests WHERE status = 'pending' LIMIT 1`).Scan(&pendingID); err != nil {
		t.Fatal(err)
	}
	pending, err := db.GetAccessRequest(ctx, pendingID)
	if err != nil {
		t.Fatal(err)
	}
	again := newAccessRequest("ar-again", pending.Identity[len("telegram:"):])
	if got, created, err := db.OpenAccessRequest(ctx, again, maxPending, time.Hour); err != nil || created || got.ID != pendingID {
		t.Errorf("reopen at the cap = %s, %v, %v; want %s", got.ID, created, err, pendingID)
	}
	// The cap is per platform.
	slack := newAccessRequest("ar-slack", "U1")
	slack.Identity, slack.Chat.Platform = "slack:U1", "slack"
	if _, created, err := db.OpenAccessRequest(ctx, slack, maxPending, time.Hour); err != nil || !created {
		t.Errorf("open on another platform = %v, %v; want created", created, err)
	}
	// Deciding one frees a place.
	if _, _, err := db.DecideAccessRequest(ctx, pendingID, access.StatusApproved, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	if _, created, err := db.OpenAccessRequest(ctx, newAccessRequest("ar-late", "999"), maxPending, time.Hour); err != nil || !created {
		t.Errorf("open after a decision = %v, %v; want created", created, err)
	}
}

func TestDecideAccessRequest(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for _, r := range []access.Request{newAccessRequest("ar-yes", "1"), newAccessRequest("ar-no", "2")} {
		if _, _, err := db.OpenAccessRequest(ctx, r, 10, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	got, ok, err := db.DecideAccessRequest(ctx, "ar-yes", access.StatusApproved, "telegram:99")
	if err != nil || !ok || got.Status != access.StatusApproved || got.DecidedBy != "telegram:99" || got.DecidedAt.IsZero() {
		t.Fatalf("approve = %+v, %v, %v", got, ok, err)
	}
	if allowed, err := db.IsAllowed(ctx, "telegram:1"); err != nil || !allowed {
		t.Errorf("IsAllowed after approval = %v, %v; want true", allowed, err)
	}
	var name, by string
	if err := db.Pool().QueryRow(ctx, `SELECT display_name, allowed_by FROM identities WHERE identity = 'telegram:1'`).Scan(&name, &by); err != nil {
		t.Fatal(err)
	}
	if name != "User 1" || by != "telegram:99" {
		t.Errorf("identity row: name %q by %q, want User 1 by telegram:99", name, by)
	}

	got, ok, err = db.DecideAccessRequest(ctx, "ar-no", access.StatusDenied, "telegram:99")
	if err != nil || !ok || got.Status != access.StatusDenied {
		t.Fatalf("deny = %+v, %v, %v", got, ok, err)
	}
	if allowed, err := db.IsAllowed(ctx, "telegram:2"); err != nil || allowed {
		t.Errorf("IsAllowed after denial = %v, %v; want false", allowed, err)
	}

	// Deciding twice: the second changes nothing.
	got, ok, err = db.DecideAccessRequest(ctx, "ar-no", access.StatusApproved, "telegram:98")
	if err != nil || ok || got.Status != access.StatusDenied || got.DecidedBy != "telegram:99" {
		t.Errorf("second decision = %s by %s, %v, %v; want refused, still denied by telegram:99", got.Status, got.DecidedBy, ok, err)
	}
	if allowed, _ := db.IsAllowed(ctx, "telegram:2"); allowed {
		t.Error("a refused second decision allowed the identity")
	}
	if c := countAction(auditOf(t, db, access.KindRequest, "ar-no"), postgres.ActionAccessDecided); c != 1 {
		t.Errorf("ar-no has %d access.decided records, want 1", c)
	}

	if _, _, err := db.DecideAccessRequest(ctx, "nope", access.StatusDenied, "telegram:99"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("DecideAccessRequest(unknown) error = %v, want ErrNotFound", err)
	}
	for _, bad := range []string{access.StatusPending, approvals.StatusAllowedOnce, ""} {
		if _, _, err := db.DecideAccessRequest(ctx, "ar-yes", bad, "telegram:99"); err == nil {
			t.Errorf("DecideAccessRequest with status %q succeeded", bad)
		}
	}
}

func TestDecideAccessRequestRace(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for round := range 5 {
		id, uid := fmt.Sprintf("ar-%d", round), fmt.Sprint(round)
		if _, _, err := db.OpenAccessRequest(ctx, newAccessRequest(id, uid), 10, time.Hour); err != nil {
			t.Fatal(err)
		}
		results := atOnce(6, func(i int) (access.Request, bool, error) {
			status := access.StatusApproved
			if i%2 == 1 {
				status = access.StatusDenied
			}
			return db.DecideAccessRequest(ctx, id, status, fmt.Sprintf("telegram:%d", 100+i))
		})
		winners := 0
		for i, r := range results {
			if r.err != nil {
				t.Fatalf("%s: decision %d: %v", id, i, r.err)
			}
			if r.ok {
				winners++
			}
		}
		if winners != 1 {
			t.Fatalf("%s: %d decisions won, want 1", id, winners)
		}
		final, err := db.GetAccessRequest(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		allowed, err := db.IsAllowed(ctx, "telegram:"+uid)
		if err != nil {
			t.Fatal(err)
		}
		if allowed != (final.Status == access.StatusApproved) {
			t.Errorf("%s: final status %s but IsAllowed = %v", id, final.Status, allowed)
		}
	}
}

func TestRevoke(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if err := db.Allow(ctx, "telegram:42", "Ada", "config"); err != nil {
		t.Fatal(err)
	}
	was, err := db.Revoke(ctx, "telegram:42", "telegram:1")
	if err != nil || !was {
		t.Fatalf("Revoke = %v, %v; want it was allowed", was, err)
	}
	if allowed, err := db.IsAllowed(ctx, "telegram:42"); err != nil || allowed {
		t.Errorf("IsAllowed after Revoke = %v, %v; want false", allowed, err)
	}
	if was, err := db.Revoke(ctx, "telegram:42", "telegram:1"); err != nil || was {
		t.Errorf("second Revoke = %v, %v; want it was not allowed", was, err)
	}
	if was, err := db.Revoke(ctx, "telegram:unknown", "telegram:1"); err != nil || was {
		t.Errorf("Revoke(unknown) = %v, %v; want false", was, err)
	}
	entries := auditOf(t, db, postgres.SubjectIdentity, "telegram:42")
	if len(entries) != 2 || countAction(entries, postgres.ActionAccessRevoked) != 2 ||
		entries[1].Detail["was_allowed"] != true || entries[0].Detail["was_allowed"] != false || entries[1].Actor != "telegram:1" {
		t.Errorf("revoke audit = %+v, want two access.revoked, the older with was_allowed", entries)
	}
}
