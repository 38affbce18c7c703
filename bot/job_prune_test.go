package bot_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// A running scheduler prunes the finished runs older than its KeepRuns and
// keeps the job's newest run, which it resumes the job from.
func TestSchedulerPrunesOldRuns(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	// Paused: the scheduler runs none of its slots, so only pruning
	// touches its runs.
	j, err := db.UpsertJob(ctx, bot.Job{Name: "report", Schedule: "@daily", Prompt: "status",
		Target: channels.Address{Platform: "test", ChatID: "room"}, Enabled: false})
	if err != nil {
		t.Fatal(err)
	}
	insert := func(age string) int64 {
		t.Helper()
		var id int64
		if err := db.Pool().QueryRow(ctx, `INSERT INTO job_runs (job_id, scheduled_at, status, finished_at)
			VALUES ($1, now() - $2::interval, 'succeeded', now() - $2::interval) RETURNING id`, j.ID, age).Scan(&id); err != nil {
			t.Fatal(err)
		}
		return id
	}
	old, newest := insert("3 days"), insert("2 days")
	exists := func(id int64) bool {
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM job_runs WHERE id = $1`, id).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 1
	}

	s := bot.NewScheduler(bot.SchedulerOptions{Jobs: db, History: db, Outbox: db, Owner: "t", Tick: time.Hour,
		KeepRuns: 24 * time.Hour})
	s.SetPruneEveryForTest(20 * time.Millisecond)
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	bot.WaitUntil(t, "the run of 3 days ago is pruned", func() bool { return !exists(old) })
	if !exists(newest) {
		t.Error("the job's newest run was pruned; the scheduler resumes the job from it")
	}
}

// Replicas try to prune at the same hour; the one holding the job runs'
// prune lock walks them and the others skip it.
func TestRunsPruneSkipsWhileAnotherReplicaPrunes(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	j, err := db.UpsertJob(ctx, bot.Job{Name: "report", Schedule: "@daily", Prompt: "status",
		Target: channels.Address{Platform: "test", ChatID: "room"}, Enabled: false})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO job_runs (job_id, scheduled_at, status)
		VALUES ($1, now() - interval '40 days', 'succeeded'), ($1, now() - interval '39 days', 'succeeded')`, j.ID); err != nil {
		t.Fatal(err)
	}
	s := bot.NewScheduler(bot.SchedulerOptions{Jobs: db, History: db, Outbox: db, Owner: "t"})
	other, led, err := db.TryLead(ctx, "jobs:prune") // another replica's pass
	if err != nil || !led {
		t.Fatalf("TryLead = %v, %v; want the lock", led, err)
	}
	if n, err := s.PruneRunsNowForTest(ctx); err != nil || n != 0 {
		t.Errorf("prune while another replica prunes = %d, %v; want 0, nil (skipped)", n, err)
	}
	if err := other.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if n, err := s.PruneRunsNowForTest(ctx); err != nil || n != 1 {
		t.Errorf("prune once the other is done (default keep, 30 days) = %d, %v; want 1, nil", n, err)
	}
}
