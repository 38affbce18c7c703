package postgres_test

import (
	"context"
	"testing"

	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func TestIdentities(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)

	ok, err := db.IsAllowed(ctx, "telegram:42")
	if err != nil || ok {
		t.Fatalf("IsAllowed(unknown) = %v, %v; want false, nil", ok, err)
	}
	if err := db.Allow(ctx, "telegram:42", "Ada", "telegram:1"); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.IsAllowed(ctx, "telegram:42"); err != nil || !ok {
		t.Fatalf("IsAllowed after Allow = %v, %v; want true, nil", ok, err)
	}
	if ok, _ := db.IsAllowed(ctx, "slack:42"); ok {
		t.Error("another platform's user with the same id is allowed")
	}

	// Allowing again updates who allowed it and keeps the name when none is given.
	if err := db.Allow(ctx, "telegram:42", "", "config"); err != nil {
		t.Fatal(err)
	}
	var name, by string
	if err := db.Pool().QueryRow(ctx, `SELECT display_name, allowed_by FROM identities WHERE identity = $1`,
		"telegram:42").Scan(&name, &by); err != nil {
		t.Fatal(err)
	}
	if name != "Ada" || by != "config" {
		t.Errorf("after second Allow: name %q by %q, want Ada by config", name, by)
	}

	// A row seen but not allowed stays not allowed.
	if _, err := db.Pool().Exec(ctx, `INSERT INTO identities (identity) VALUES ('discord:7')`); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.IsAllowed(ctx, "discord:7"); ok {
		t.Error("identity with allowed=false reported allowed")
	}
}
