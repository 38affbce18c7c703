package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// TestE2EJobExactlyOncePerSlotAcrossReplicas runs three daemons on one
// PostgreSQL and Redis with a job every 2 s (each run takes ~0.8 s) for
// ~20 s and kills, half-way, the replica that is running a slot: that slot
// is taken over when the dead replica's heartbeat goes stale (not when its
// 60 s lease ends), the slots behind it queue, and every slot runs once and
// is delivered once.
func TestE2EJobExactlyOncePerSlotAcrossReplicas(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tg, llm := fakes(t)
	llm.Handle(func(llmtest.Request) llmtest.Reply {
		return llmtest.Reply{Text: "pulse", Delay: 800 * time.Millisecond}
	})
	base := externalEnv(t, tg, llm, "")
	cfg := `jobs:
  - name: pulse
    schedule: "*/2 * * * * *"
    prompt: "say pulse"
    target: telegram:5151
    catch_up: none
    overlap: queue
`
	var replicas []*daemonProc
	for range 3 {
		replicas = append(replicas, startReplica(ctx, t, base, cfg))
	}
	db, err := pgx.Connect(ctx, base["SWITCHBOARD_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(ctx)
	time.Sleep(8 * time.Second)
	victim := runningReplica(ctx, t, db, replicas)
	victim.kill9()
	time.Sleep(12 * time.Second)
	for _, d := range replicas {
		if d != victim {
			d.stop()
		}
	}

	rows, err := db.Query(ctx, `SELECT r.scheduled_at, r.status, r.attempts, count(*) OVER (PARTITION BY r.scheduled_at)
		FROM job_runs r JOIN jobs j ON j.id = r.job_id WHERE j.name = 'pulse' ORDER BY r.scheduled_at`)
	if err != nil {
		t.Fatal(err)
	}
	succeeded, retaken := 0, 0
	var slots []time.Time
	for rows.Next() {
		var at time.Time
		var status string
		var n, attempts int
		if err := rows.Scan(&at, &status, &attempts, &n); err != nil {
			t.Fatal(err)
		}
		if n != 1 {
			t.Fatalf("slot %s has %d run rows", at, n)
		}
		slots = append(slots, at)
		if status == "succeeded" {
			succeeded++
			if attempts > 1 {
				retaken++
			}
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
	t.Logf("%d slots, %d succeeded (%d after a take-over), %d delivered", len(slots), succeeded, retaken, len(tg.Messages(5151)))
	if retaken == 0 {
		t.Errorf("the killed replica's slot was not taken over and finished")
	}
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

// runningReplica waits until one of replicas is running a job slot and
// returns it (lease owners are hostname-pid-random).
func runningReplica(ctx context.Context, t *testing.T, db *pgx.Conn, replicas []*daemonProc) *daemonProc {
	t.Helper()
	for {
		var owner string
		err := db.QueryRow(ctx, `SELECT lease_owner FROM job_runs WHERE status = 'running' AND lease_until > now()
			ORDER BY scheduled_at DESC LIMIT 1`).Scan(&owner)
		if err == nil {
			for _, d := range replicas {
				if strings.Contains(owner, fmt.Sprintf("-%d-", d.cmd.Process.Pid)) {
					return d
				}
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no replica was seen running a slot: %v", err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}
