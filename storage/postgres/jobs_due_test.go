package postgres_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// everySecondPlan claims the slot at `slot` and moves the job's next due
// time to an hour later; it records the jobs it was asked about.
func everySecondPlan(slot time.Time, seen *sync.Map) func(jobs.DueJob) jobs.SlotPlan {
	return func(d jobs.DueJob) jobs.SlotPlan {
		if seen != nil {
			seen.Store(d.ID, true)
		}
		return jobs.SlotPlan{Claim: []time.Time{slot}, Handled: slot, Next: slot.Add(time.Hour)}
	}
}

// TestClaimDueOnceAcrossReplicas: replicas claiming due jobs at the same
// time, in batches smaller than the jobs due, claim each job's slot exactly
// once between them, and a job whose next due time moved is not due again.
func TestClaimDueOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	url := pgtest.New(t)
	const n = 60
	var dbs []*postgres.DB
	for range 3 {
		db, err := postgres.Open(ctx, url, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(db.Close)
		dbs = append(dbs, db)
	}
	if err := postgres.Migrate(ctx, dbs[0]); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		newJob(t, ctx, dbs[0], "j"+string(rune('a'+i/26))+string(rune('a'+i%26)))
	}
	slot := time.Now().Truncate(time.Second)
	var (
		mu      sync.Mutex
		claimed = map[int64]int{}
		wg      sync.WaitGroup
	)
	for r, db := range dbs {
		wg.Go(func() {
			for {
				runs, locked, err := db.ClaimDue(ctx, jobs.ClaimDueOptions{Owner: string(rune('a' + r)), Lease: time.Minute,
					Limit: 7, Now: slot.Add(time.Second)}, everySecondPlan(slot, nil))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, c := range runs {
					claimed[c.Run.JobID]++
					if c.Job.ID != c.Run.JobID || c.Job.Name == "" || !c.Run.ScheduledAt.Equal(slot) {
						t.Errorf("claimed run %+v of job %+v", c.Run, c.Job)
					}
				}
				mu.Unlock()
				if locked < 7 {
					return
				}
			}
		})
	}
	wg.Wait()
	if len(claimed) != n {
		t.Fatalf("%d jobs claimed, want %d", len(claimed), n)
	}
	for id, k := range claimed {
		if k != 1 {
			t.Errorf("job %d claimed %d times", id, k)
		}
	}
	runs, locked, err := dbs[1].ClaimDue(ctx, jobs.ClaimDueOptions{Owner: "late", Lease: time.Minute, Limit: 100,
		Now: slot.Add(time.Minute)}, everySecondPlan(slot, nil))
	if err != nil || locked != 0 || len(runs) != 0 {
		t.Fatalf("after the slot: %d locked, %d claimed, %v; want none due", locked, len(runs), err)
	}
	next, err := dbs[2].NextDue(ctx)
	if err != nil || !next.Equal(slot.Add(time.Hour)) {
		t.Fatalf("NextDue = %s, %v; want %s", next, err, slot.Add(time.Hour))
	}
}

// TestClaimDueOverlap: a due job whose previous run is open is planned as
// busy under overlap skip (its skipped slot on record), and left alone
// under overlap queue until that run ends.
func TestClaimDueOverlap(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	skip := newJob(t, ctx, db, "skipper")
	queue := newJob(t, ctx, db, "queuer")
	queue.Overlap = jobs.OverlapQueue
	if _, err := db.UpsertJob(ctx, queue); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute).Truncate(time.Second)
	for _, j := range []jobs.Job{skip, queue} {
		if _, claimed, err := db.ClaimSlot(ctx, j.ID, old, "a", time.Hour, j.Overlap, false); err != nil || !claimed {
			t.Fatalf("claim old slot of %s: %v, %v", j.Name, claimed, err)
		}
	}
	slot := time.Now().Truncate(time.Second)
	var seen sync.Map
	plan := func(d jobs.DueJob) jobs.SlotPlan {
		seen.Store(d.Name, d.Busy)
		return jobs.SlotPlan{Skip: []time.Time{slot}, Handled: slot, Next: slot.Add(time.Hour)}
	}
	if _, locked, err := db.ClaimDue(ctx, jobs.ClaimDueOptions{Owner: "b", Lease: time.Minute, Limit: 10, Now: slot.Add(time.Second)}, plan); err != nil || locked != 1 {
		t.Fatalf("ClaimDue locked %d, %v; want the skip job alone", locked, err)
	}
	if busy, ok := seen.Load("skipper"); !ok || busy != true {
		t.Fatalf("skip job planned busy=%v (seen %v), want busy", busy, ok)
	}
	if _, ok := seen.Load("queuer"); ok {
		t.Fatal("queue job planned while its previous run is open")
	}
	runs, err := db.RecentRuns(ctx, skip.ID, 5)
	if err != nil || len(runs) != 2 || runs[0].Status != jobs.RunSkipped || !runs[0].ScheduledAt.Equal(slot) {
		t.Fatalf("runs of the skip job = %+v, %v; want the new slot skipped", runs, err)
	}
	open, err := db.RecentRuns(ctx, queue.ID, 1)
	if err != nil || len(open) != 1 {
		t.Fatal(open, err)
	}
	if err := db.FinishRun(ctx, open[0].ID, "a", jobs.RunOutcome{Status: jobs.RunSucceeded}); err != nil {
		t.Fatal(err)
	}
	claimed, locked, err := db.ClaimDue(ctx, jobs.ClaimDueOptions{Owner: "b", Lease: time.Minute, Limit: 10, Now: slot.Add(time.Second)}, everySecondPlan(slot, nil))
	if err != nil || locked != 1 || len(claimed) != 1 || claimed[0].Job.Name != "queuer" {
		t.Fatalf("after the run ended: %d locked, %+v, %v; want the queue job's slot claimed", locked, claimed, err)
	}
}

// TestSyncConfigJobs: syncing the config saves new and changed jobs only,
// keeps an unchanged job's schedule position, and retires a job removed
// from the config (gone from listings, its runs kept) until it comes back.
func TestSyncConfigJobs(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	cfg := func(name, schedule string) jobs.Job {
		return jobs.Job{Name: name, Schedule: schedule, Prompt: "p", Enabled: true, CreatedBy: "config", Source: jobs.JobFromConfig,
			Target: channels.Address{Platform: "telegram", ChatID: "1"}, Overlap: jobs.OverlapSkip, CatchUp: jobs.CatchUpLast}
	}
	chat := newJob(t, ctx, db, "from-chat")
	res, err := db.SyncConfigJobs(ctx, []jobs.Job{cfg("a", "@hourly"), cfg("b", "@daily")})
	if err != nil || len(res.Saved) != 2 || len(res.Retired) != 0 {
		t.Fatalf("first sync = %+v, %v", res, err)
	}
	a, _ := db.GetJob(ctx, "a")
	slot := time.Now().Truncate(time.Second)
	if _, _, err := db.ClaimDue(ctx, jobs.ClaimDueOptions{Owner: "x", Lease: time.Minute, Limit: 10, Now: slot.Add(time.Second)}, everySecondPlan(slot, nil)); err != nil {
		t.Fatal(err)
	}
	res, err = db.SyncConfigJobs(ctx, []jobs.Job{cfg("a", "@hourly"), cfg("b", "@daily")})
	if err != nil || len(res.Saved) != 0 || len(res.Retired) != 0 {
		t.Fatalf("unchanged sync = %+v, %v; want nothing changed", res, err)
	}
	if next, err := db.NextDue(ctx); err != nil || !next.Equal(slot.Add(time.Hour)) {
		t.Fatalf("NextDue after an unchanged sync = %s, %v; want the planned %s kept", next, err, slot.Add(time.Hour))
	}
	res, err = db.SyncConfigJobs(ctx, []jobs.Job{cfg("b", "@weekly")})
	if err != nil || len(res.Saved) != 1 || res.Saved[0] != "b" || len(res.Retired) != 1 || res.Retired[0] != "a" {
		t.Fatalf("sync dropping a, changing b = %+v, %v", res, err)
	}
	list, err := db.ListJobs(ctx)
	if err != nil || len(list) != 2 || list[0].Name != "b" || list[1].Name != chat.Name {
		t.Fatalf("list after retiring a = %+v, %v; want b and the chat job", list, err)
	}
	if runs, err := db.RecentRuns(ctx, a.ID, 5); err != nil || len(runs) != 1 {
		t.Fatalf("runs of retired a = %+v, %v; want its history kept", runs, err)
	}
	if runs, locked, err := db.ClaimDue(ctx, jobs.ClaimDueOptions{Owner: "x", Lease: time.Minute, Limit: 10, Now: slot.Add(2 * time.Hour)}, everySecondPlan(slot.Add(2*time.Hour), nil)); err != nil || locked != 2 || len(runs) != 2 {
		t.Fatalf("due after retiring a: %d locked, %d runs, %v; want b (replanned) and the chat job, not a", locked, len(runs), err)
	}
	if res, err = db.SyncConfigJobs(ctx, []jobs.Job{cfg("a", "@hourly"), cfg("b", "@weekly")}); err != nil || len(res.Saved) != 1 || res.Saved[0] != "a" {
		t.Fatalf("sync bringing a back = %+v, %v", res, err)
	}
	if back, err := db.GetJob(ctx, "a"); err != nil || back.ID != a.ID {
		t.Fatalf("a back = %+v, %v; want the same job", back, err)
	}
}

// With no job due ever, NextDue says so (zero), so an idle scheduler
// sleeps its whole tick instead of looking again at once.
func TestNextDueWithoutJobs(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	if next, err := db.NextDue(ctx); err != nil || !next.IsZero() {
		t.Fatalf("NextDue without jobs = %s, %v; want zero", next, err)
	}
	j := newJob(t, ctx, db, "reporter")
	if _, err := db.Pool().Exec(ctx, `UPDATE jobs SET next_due = now() - interval '1 hour' WHERE name = $1`, j.Name); err != nil {
		t.Fatal(err)
	}
	next, err := db.NextDue(ctx)
	if err != nil || next.IsZero() || time.Since(next) > 30*time.Second {
		t.Fatalf("NextDue with a job an hour overdue = %s, %v; want about now", next, err)
	}
	if err := db.SetJobEnabled(ctx, j.Name, false); err != nil {
		t.Fatal(err)
	}
	if next, err := db.NextDue(ctx); err != nil || !next.IsZero() {
		t.Fatalf("NextDue with the only job disabled = %s, %v; want zero", next, err)
	}
}
