package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestPruneJobRuns: finished runs older than keep go, page by page; each
// job's newest run, open runs and young runs stay, and the slot the
// scheduler resumes each job from (LastSlot) does not move.
func TestPruneJobRuns(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	a, b, c := newJob(t, ctx, db, "a"), newJob(t, ctx, db, "b"), newJob(t, ctx, db, "c")
	day := 24 * time.Hour
	now := time.Now().Truncate(time.Second)
	type run struct {
		job    int64
		age    time.Duration
		status string
		stays  string // why it stays; "" when it goes
	}
	// Oldest first, as slots are claimed.
	runs := []run{
		{b.ID, 60 * day, "succeeded", "the newest run of job b"},
		{a.ID, 40 * day, "succeeded", ""},
		{c.ID, 40 * day, "failed", ""},
		{c.ID, 39 * day, "succeeded", "the newest run of job c"},
		{a.ID, 35 * day, "failed", ""},
		{a.ID, 33 * day, "skipped", ""},
		{a.ID, 31 * day, "pending", "pending a retry"},
		{a.ID, 31*day - time.Hour, "running", "running"},
		{a.ID, 10 * day, "succeeded", "younger than keep"},
	}
	ids := make([]int64, len(runs))
	for i, r := range runs {
		err := db.Pool().QueryRow(ctx, `INSERT INTO job_runs (job_id, scheduled_at, status) VALUES ($1, $2, $3) RETURNING id`,
			r.job, now.Add(-r.age), r.status).Scan(&ids[i])
		if err != nil {
			t.Fatal(err)
		}
	}
	lastBefore := map[int64]time.Time{}
	for _, j := range []int64{a.ID, b.ID, c.ID} {
		last, err := db.LastSlot(ctx, j)
		if err != nil {
			t.Fatal(err)
		}
		lastBefore[j] = last
	}

	// Pages of two rows: the walk goes on past pages that kept or deleted
	// everything and stops at the page that ends with a young run.
	n, err := db.PruneJobRuns(ctx, 30*day, 2)
	if err != nil {
		t.Fatal(err)
	}
	goneWant := 0
	for i, r := range runs {
		var left int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM job_runs WHERE id = $1`, ids[i]).Scan(&left); err != nil {
			t.Fatal(err)
		}
		switch {
		case r.stays == "":
			goneWant++
			if left != 0 {
				t.Errorf("run %d (%s, %s old) stayed; it is finished and older than keep", i, r.status, r.age)
			}
		case left != 1:
			t.Errorf("run %d (%s, %s old) went; it should stay: %s", i, r.status, r.age, r.stays)
		}
	}
	if n != goneWant {
		t.Errorf("PruneJobRuns = %d; want %d", n, goneWant)
	}
	for j, before := range lastBefore {
		if last, err := db.LastSlot(ctx, j); err != nil || !last.Equal(before) {
			t.Errorf("job %d: LastSlot = %s, %v after pruning; want %s", j, last, err, before)
		}
	}
	// A second pass finds nothing more.
	if n, err := db.PruneJobRuns(ctx, 30*day, 2); err != nil || n != 0 {
		t.Errorf("second pass = %d, %v; want 0, nil", n, err)
	}
	if _, err := db.PruneJobRuns(ctx, 0, 2); err == nil {
		t.Error("keep 0 accepted; want an error (it would delete every finished run)")
	}
}
