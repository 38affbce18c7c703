package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/storage/secretbox"
	"github.com/switchboard-chat/switchboard/tools/exec"
)

func newBox(t *testing.T) *secretbox.Box {
	k := make([]byte, secretbox.KeySize)
	_, _ = rand.Read(k)
	b, err := secretbox.New(k)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCustomToolSecretsAtRest: env values are never in Postgres in plain
// text; the right key opens them, another key or none is refused with a
// clear error, and a rotation re-seals them under the new key.
func TestCustomToolSecretsAtRest(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	box := newBox(t)
	store := postgres.CustomTools{DB: db, Box: box}
	const secret = "dns-api-key-5f0c1d2e3a4b"
	spec := exec.CustomSpec{Name: "dns_lookup", Description: "dig", Command: "dig +short {{.domain}}",
		Parameters: json.RawMessage(`{"type":"object","properties":{"domain":{"type":"string"}}}`),
		Timeout:    10 * time.Second, Env: map[string]string{"DNS_API_KEY": secret}}
	if err := store.Put(ctx, spec, "telegram:1"); err != nil {
		t.Fatal(err)
	}
	var raw string
	if err := db.Pool().QueryRow(ctx, `SELECT row_to_json(c)::text FROM custom_tools c`).Scan(&raw); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(raw, secret) || !strings.Contains(raw, "DNS_API_KEY") {
		t.Fatalf("stored row = %s; want the name, not the value", raw)
	}
	var audit string
	_ = db.Pool().QueryRow(ctx, `SELECT coalesce(string_agg(detail::text, ' '), '') FROM audit_log`).Scan(&audit)
	if strings.Contains(audit, secret) {
		t.Fatal("the audit log holds the secret")
	}
	got, err := store.List(ctx)
	if err != nil || len(got) != 1 || got[0].Env["DNS_API_KEY"] != secret || got[0].Timeout != 10*time.Second {
		t.Fatalf("List = %+v, %v", got, err)
	}
	if _, err := (postgres.CustomTools{DB: db}).List(ctx); !errors.Is(err, postgres.ErrNoSecretsKey) {
		t.Fatalf("List without a key = %v; want ErrNoSecretsKey", err)
	}
	if _, err := (postgres.CustomTools{DB: db, Box: newBox(t)}).List(ctx); !errors.Is(err, secretbox.ErrWrongKey) {
		t.Fatalf("List with another key = %v; want ErrWrongKey", err)
	}
	if err := (postgres.CustomTools{DB: db}).Put(ctx, spec, "x"); !errors.Is(err, postgres.ErrNoSecretsKey) {
		t.Fatalf("Put with env and no key = %v", err)
	}
	next := newBox(t)
	if n, err := store.Rotate(ctx, next); err != nil || n != 1 {
		t.Fatalf("Rotate = %d, %v", n, err)
	}
	if got, err := (postgres.CustomTools{DB: db, Box: next}).List(ctx); err != nil || got[0].Env["DNS_API_KEY"] != secret {
		t.Fatalf("List with the new key = %+v, %v", got, err)
	}
	if _, err := store.List(ctx); !errors.Is(err, secretbox.ErrWrongKey) {
		t.Fatalf("the old key still opens the values: %v", err)
	}
	if ok, err := store.Delete(ctx, "dns_lookup", "telegram:1"); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
}
