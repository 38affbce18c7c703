package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// TestE2EJobExactlyOncePerSlotAcrossReplicas runs three daemons on one
// PostgreSQL and Redis with a job every 2 s for ~20 s and kills one of them
// half-way: every slot must have run once and been delivered once.
func TestE2EJobExactlyOncePerSlotAcrossReplicas(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg := telegramtest.NewServer(testToken)
	defer tg.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	base := externalEnv(t, tg, llm, "")
	cfg := `jobs:
  - name: pulse
    schedule: "*/2 * * * * *"
    prompt: "SAY: pulse"
    target: telegram:5151
    catch_up: none
`
	var replicas []*daemonProc
	for range 3 {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
		env := map[string]string{}
		for k, v := range base {
			env[k] = v
		}
		addr := freeAddr(t)
		env["SWITCHBOARD_HTTP_LISTEN"] = addr
		env["SWITCHBOARD_DATA_DIR"] = filepath.Join(dir, "data")
		d := startDaemon(t, dir, addr, env)
		d.waitReady(ctx)
		replicas = append(replicas, d)
	}
	time.Sleep(9 * time.Second)
	replicas[1].kill9()
	time.Sleep(11 * time.Second)
	for _, d := range []*daemonProc{replicas[0], replicas[2]} {
		d.stop()
	}

	db, err := pgx.Connect(ctx, base["SWITCHBOARD_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	rows, err := db.Query(ctx, `SELECT r.scheduled_at, r.status, count(*) OVER (PARTITION BY r.scheduled_at)
		FROM job_runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'pulse' ORDER BY r.scheduled_at`)
	if err != nil {
		t.Fatal(err)
	}
	succeeded := 0
	var slots []time.Time
	for rows.Next() {
		var at time.Time
		var status string
		var n int
		if err := rows.Scan(&at, &status, &n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("slot %s has %d run rows", at, n)
		}
		slots = append(slots, at)
		if status == "succeeded" {
			succeeded++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if len(slots) < 7 {
		t.Fatalf("only %d slots ran in ~20 s of a 2 s job", len(slots))
	}
	for i := 1; i < len(slots); i++ {
		if gap := slots[i].Sub(slots[i-1]); gap != 2*time.Second {
			t.Errorf("slots %s and %s are %s apart: a slot was skipped", slots[i-1], slots[i], gap)
		}
	}
	t.Logf("%d slots, %d succeeded, %d delivered", len(slots), succeeded, len(tg.Messages(5151)))
	// Runs in flight when the survivors stopped may be unfinished; every
	// finished slot was delivered exactly once.
	delivered := len(tg.Messages(5151))
	if delivered != succeeded {
		t.Fatalf("%d succeeded slots but %d messages delivered", succeeded, delivered)
	}
	if succeeded < len(slots)-2 {
		t.Fatalf("only %d of %d slots succeeded", succeeded, len(slots))
	}
}
