package main

import (
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestE2EJobCatchUpAfterRestart: hourly jobs whose slots were missed while
// the daemon was down follow their catch_up policy when it starts again:
// "last" runs the newest missed slot once and its answer reaches its chat
// once; "none" drops the missed slots and posts nothing.
func TestE2EJobCatchUpAfterRestart(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	addr := freeAddr(t)
	dir := t.TempDir()
	// Hourly at the minute ten minutes ago: the newest missed slot is ten
	// minutes old, the next fifty minutes away, whenever the test runs.
	newestMissed := time.Now().UTC().Add(-10 * time.Minute).Truncate(time.Minute)
	minute := strconv.Itoa(newestMissed.Minute())
	writeConfig(t, dir, `jobs:
  - name: report-last
    schedule: "`+minute+` * * * *"
    prompt: "SAY: caught up"
    target: telegram:5151
    catch_up: last
  - name: report-none
    schedule: "`+minute+` * * * *"
    prompt: "SAY: should not run"
    target: telegram:5252
    catch_up: none
`)
	env := externalEnv(t, tg, llm, addr)
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	d.stop()

	// The daemon was down since three hours ago: the jobs last handled the
	// slot then, so the three hourly slots since were missed.
	conn, err := pgx.Connect(ctx, env["SWITCHBOARD_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	lastHandled := newestMissed.Add(-3 * time.Hour)
	if _, err := conn.Exec(ctx, `UPDATE jobs SET last_slot = $1, next_due = $2`, lastHandled, lastHandled.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}

	d = startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	msgs, err := waitAnswers(ctx, tg, 5151, 1)
	if err != nil {
		t.Fatalf("catch_up last: %v", err)
	}
	if msgs[0].Visible != "caught up" {
		t.Fatalf("catch_up last answer = %q", msgs[0].Visible)
	}
	var slots []time.Time
	eventually(ctx, t, "both jobs planned past the missed slots, the last one's run succeeded", func() bool {
		var planned int
		if err := conn.QueryRow(ctx, `SELECT count(*) FROM jobs WHERE last_slot >= $1`, newestMissed).Scan(&planned); err != nil || planned != 2 {
			return false
		}
		rows, err := conn.Query(ctx, `SELECT r.scheduled_at FROM job_runs r JOIN jobs j ON j.id = r.job_id
			WHERE j.name = 'report-last' AND r.status = 'succeeded'`)
		if err != nil {
			return false
		}
		slots, err = pgx.CollectRows(rows, pgx.RowTo[time.Time])
		return err == nil && len(slots) > 0
	})
	if len(slots) != 1 || !slots[0].Equal(newestMissed) {
		t.Fatalf("report-last ran slots %v; want the newest missed %s alone", slots, newestMissed)
	}
	var noneRuns int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM job_runs r JOIN jobs j ON j.id = r.job_id
		WHERE j.name = 'report-none'`).Scan(&noneRuns); err != nil || noneRuns != 0 {
		t.Fatalf("report-none has %d runs (%v); catch_up none must drop missed slots", noneRuns, err)
	}
	// The run is finished and delivered: nothing more is on its way.
	if got, _ := waitAnswers(ctx, tg, 5151, 1); len(got) != 1 {
		t.Fatalf("catch_up last answered %d times, want once: %+v", len(got), got)
	}
	if got := tg.Messages(5252); len(got) != 0 {
		t.Fatalf("catch_up none posted %+v", got)
	}
}
