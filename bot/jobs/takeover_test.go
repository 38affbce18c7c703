package jobs_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
)

// quiet is a runner that answers every job with jobs.NoReply and counts
// the runs.
type quiet struct{ runs atomic.Int64 }

func (q *quiet) Run(context.Context, agentcore.RunInput) (agentcore.RunResult, error) {
	q.runs.Add(1)
	return agentcore.RunResult{Text: jobs.NoReply}, nil
}

// A replica that died mid-slot leaves more runs than one look lists: the
// next check takes every one of them over, not a page per check.
func TestTakeOverPagesThroughADeadReplicasRuns(t *testing.T) {
	ctx := context.Background()
	_, db := replicasDB(t)
	const orphans = 250
	slot := time.Now().Add(-10 * time.Second).Truncate(time.Second)
	for i := range orphans {
		j, err := db.UpsertJob(ctx, jobs.Job{Name: fmt.Sprintf("orphan-%03d", i), Schedule: "0 0 1 1 *", Prompt: "report",
			Target: channels.Address{Platform: "test", ChatID: "1"}, Enabled: true, CreatedBy: "test:1"})
		if err != nil {
			t.Fatal(err)
		}
		// Claimed by a replica whose lease has run out: it died.
		if _, claimed, err := db.ClaimSlot(ctx, j.ID, slot, "dead", time.Millisecond, jobs.OverlapSkip, false); err != nil || !claimed {
			t.Fatalf("claim for the dead replica: %v, %v", claimed, err)
		}
	}
	time.Sleep(10 * time.Millisecond) // the leases run out
	runner := &quiet{}
	// One check only: the first, at start; the next would be an hour on.
	s := jobs.NewScheduler(jobs.SchedulerOptions{Jobs: db, History: db, Agents: oneAgent{runner}, Owner: "live", Tick: time.Hour})
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); s.Run(runCtx) }()
	t.Cleanup(func() { cancel(); <-done })
	waitUntil(t, "every orphaned run taken over and finished", func() bool {
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM job_runs WHERE status = 'succeeded' AND lease_owner = 'live'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == orphans
	})
	if n := runner.runs.Load(); n != orphans {
		t.Fatalf("%d runs for %d orphaned slots, want one each", n, orphans)
	}
}
