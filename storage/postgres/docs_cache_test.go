package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/tools"
)

func TestDocsCacheKeepsReadsUntilADocChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dbs := openReplicas(t, ctx, 2)
	if err := postgres.Migrate(ctx, dbs[0]); err != nil {
		t.Fatal(err)
	}
	here, other := postgres.NewDocsCache(dbs[0]), dbs[1] // other: another replica
	soul := tools.DocKey{Agent: "default", Path: "SOUL.md"}
	read := func() string {
		t.Helper()
		docs, err := here.GetDocs(ctx, "default", []string{""}, []string{"SOUL.md", "USER.md"})
		if err != nil {
			t.Fatalf("GetDocs: %v", err)
		}
		return docs[""]["SOUL.md"]
	}
	// quietly changes the file without the notice the trigger sends, so a
	// read shows whether it came from memory.
	quietly := func(content string) {
		t.Helper()
		if _, err := other.Pool().Exec(ctx, `ALTER TABLE agent_docs DISABLE TRIGGER agent_docs_notify`); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Pool().Exec(ctx, `UPDATE agent_docs SET content = $1 WHERE path = 'SOUL.md'`, content); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Pool().Exec(ctx, `ALTER TABLE agent_docs ENABLE TRIGGER agent_docs_notify`); err != nil {
			t.Fatal(err)
		}
	}

	if err := other.PutDoc(ctx, soul, "v1"); err != nil {
		t.Fatal(err)
	}
	// Not listening: every read goes to PostgreSQL.
	if got := read(); got != "v1" {
		t.Fatalf("read %q, want v1", got)
	}
	quietly("v2")
	if got := read(); got != "v2" {
		t.Fatalf("not listening, yet read %q, want v2 from PostgreSQL", got)
	}

	startListening(t, ctx, here.Listen)
	waitFor(t, "the cache to listen", here.Listening)

	if got := read(); got != "v2" {
		t.Fatalf("read %q, want v2", got)
	}
	quietly("v3") // no notice: the cache keeps v2
	if got := read(); got != "v2" {
		t.Fatalf("read %q, want v2 kept in memory (the change sent no notice)", got)
	}
	// Another replica changes the file: its notice arrives.
	if err := other.PutDoc(ctx, soul, "v4"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "another replica's change", func() bool { return read() == "v4" })
	// A change made through the cache is read back at once.
	if err := here.PutDoc(ctx, soul, "v5"); err != nil {
		t.Fatal(err)
	}
	if got := read(); got != "v5" {
		t.Fatalf("read %q right after PutDoc through the cache, want v5", got)
	}
	if got := read(); got != "v5" { // now from memory
		t.Fatalf("read %q, want v5", got)
	}

	// The listening connection dies: reads go to PostgreSQL until it
	// listens again.
	if _, err := other.Pool().Exec(ctx, `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN agent_docs'`); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the cache to notice its connection died", func() bool { return !here.Listening() })
	quietly("v6")
	if got := read(); got != "v6" {
		t.Fatalf("connection lost, yet read %q, want v6 from PostgreSQL", got)
	}
	waitFor(t, "the cache to listen again", here.Listening)
	if got := read(); got != "v6" {
		t.Fatalf("read %q, want v6", got)
	}
	quietly("v7")
	if got := read(); got != "v6" {
		t.Fatalf("listening again, read %q, want v6 kept in memory", got)
	}
}

// startListening runs a cache's Listen until the test ends.
func startListening(t *testing.T, ctx context.Context, listen func(context.Context)) {
	listenCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); listen(listenCtx) }()
	t.Cleanup(func() { stop(); <-done })
}
