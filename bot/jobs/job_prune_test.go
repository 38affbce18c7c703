package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// pausedJob stores a paused job: the scheduler runs none of its slots, so
// only pruning touches its runs.
func pausedJob(t *testing.T, db *postgres.DB) jobs.Job {
	t.Helper()
	j, err := db.UpsertJob(context.Background(), jobs.Job{Name: "report", Schedule: "@daily", Prompt: "status",
		Target: channels.Address{Platform: "test", ChatID: "room"}, Enabled: false})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// finishedRun stores a run of job j that succeeded for a slot age ago.
func finishedRun(t *testing.T, db *postgres.DB, j jobs.Job, age string) int64 {
	t.Helper()
	var id int64
	if err := db.Pool().QueryRow(context.Background(), `INSERT INTO job_runs (job_id, scheduled_at, status, finished_at)
		VALUES ($1, now() - $2::interval, 'succeeded', now() - $2::interval) RETURNING id`, j.ID, age).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// A running scheduler prunes the finished runs older than its KeepRuns and
// keeps the job's newest run, which it resumes the job from.
func TestSchedulerPrunesOldRuns(t *testing.T) {
	db := pgtest.Open(t, context.Background())
	j := pausedJob(t, db)
	old, newest := finishedRun(t, db, j, "3 days"), finishedRun(t, db, j, "2 days")
	s := jobs.NewScheduler(jobs.SchedulerOptions{Jobs: db, History: db, Owner: "t", Tick: time.Hour,
		KeepRuns: 24 * time.Hour})
	s.SetPruneEveryForTest(20 * time.Millisecond)
	pgtest.RunUntilPruned(t, db, "job_runs", s.Run, old, newest, "the job's newest run, which the scheduler resumes the job from")
}

// Replicas try to prune at the same hour; the one holding the job runs'
// prune lock walks them and the others skip it.
func TestRunsPruneSkipsWhileAnotherReplicaPrunes(t *testing.T) {
	db := pgtest.Open(t, context.Background())
	j := pausedJob(t, db)
	finishedRun(t, db, j, "40 days")
	finishedRun(t, db, j, "39 days")
	s := jobs.NewScheduler(jobs.SchedulerOptions{Jobs: db, History: db, Owner: "t"})
	// The default keep, 30 days: the older run goes, the newest stays.
	pgtest.CheckPruneTakesTurns(t, db, "jobs:prune", s.PruneRunsNowForTest, 1)
}
