package postgres_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func newJob(t *testing.T, ctx context.Context, db *postgres.DB, name string) jobs.Job {
	t.Helper()
	j, err := db.UpsertJob(ctx, jobs.Job{Name: name, Schedule: "@every 1s", Prompt: "report",
		Target: channels.Address{Platform: "telegram", ChatID: "-100", ThreadID: "7"}, Enabled: true, CreatedBy: "telegram:1"})
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestJobsCRUD(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	j := newJob(t, ctx, db, "daily")
	if j.ID == 0 || j.Overlap != jobs.OverlapSkip || j.CatchUp != jobs.CatchUpLast || j.Target.ThreadID != "7" {
		t.Fatalf("stored job = %+v", j)
	}
	j.Prompt = "new prompt"
	again, err := db.UpsertJob(ctx, j)
	if err != nil || again.ID != j.ID || again.Prompt != "new prompt" {
		t.Fatalf("upsert = %+v, %v; want same id with new prompt", again, err)
	}
	if err := db.SetJobEnabled(ctx, "daily", false); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetJob(ctx, "daily")
	if err != nil || got.Enabled {
		t.Fatalf("get after pause = %+v, %v", got, err)
	}
	list, err := db.ListJobs(ctx)
	if err != nil || len(list) != 1 {
		t.Fatalf("list = %v, %v", list, err)
	}
	if err := db.DeleteJob(ctx, "daily"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetJob(ctx, "daily"); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("get deleted = %v, want ErrNotFound", err)
	}
	if err := db.DeleteJob(ctx, "daily"); !errors.Is(err, bot.ErrNotFound) {
		t.Fatalf("delete twice = %v, want ErrNotFound", err)
	}
}

func TestClaimSlotOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	j := newJob(t, ctx, db, "once")
	slot := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		winners []string
	)
	for i := range 10 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			owner := "replica-" + string(rune('a'+i))
			_, claimed, err := db.ClaimSlot(ctx, j.ID, slot, owner, time.Minute, jobs.OverlapSkip, false)
			if err != nil {
				t.Error(err)
				return
			}
			if claimed {
				mu.Lock()
				winners = append(winners, owner)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(winners) != 1 {
		t.Fatalf("winners = %v, want exactly one", winners)
	}
	runs, err := db.RecentRuns(ctx, j.ID, 10)
	if err != nil || len(runs) != 1 || runs[0].Status != jobs.RunRunning || runs[0].LeaseOwner != winners[0] {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	last, err := db.LastSlot(ctx, j.ID)
	if err != nil || !last.Equal(slot) {
		t.Fatalf("last slot = %s, %v; want %s", last, err, slot)
	}
}

func TestClaimSlotLeases(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	j := newJob(t, ctx, db, "lease")
	slot := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	run, claimed, err := db.ClaimSlot(ctx, j.ID, slot, "a", 300*time.Millisecond, jobs.OverlapSkip, false)
	if err != nil || !claimed {
		t.Fatalf("first claim = %v, %v", claimed, err)
	}
	// A live lease is not reclaimable, and a second slot is skipped.
	if _, claimed, err := db.ClaimSlot(ctx, j.ID, slot, "b", time.Minute, jobs.OverlapSkip, false); err != nil || claimed {
		t.Fatalf("claim under live lease = %v, %v; want not claimed", claimed, err)
	}
	next := slot.Add(time.Second)
	if _, claimed, err := db.ClaimSlot(ctx, j.ID, next, "b", time.Minute, jobs.OverlapSkip, false); err != nil || claimed {
		t.Fatalf("overlapping slot = %v, %v; want skipped", claimed, err)
	}
	if due, err := db.DueRuns(ctx, 10); err != nil || len(due) != 0 {
		t.Fatalf("due under live lease = %v, %v", due, err)
	}
	// Once the lease expires another owner takes the run over.
	deadline := time.Now().Add(10 * time.Second)
	var due []jobs.JobRun
	for time.Now().Before(deadline) && len(due) == 0 {
		time.Sleep(100 * time.Millisecond)
		if due, err = db.DueRuns(ctx, 10); err != nil {
			t.Fatal(err)
		}
	}
	if len(due) != 1 || due[0].ID != run.ID {
		t.Fatalf("due after expiry = %+v", due)
	}
	taken, claimed, err := db.ClaimSlot(ctx, j.ID, slot, "b", time.Minute, jobs.OverlapSkip, false)
	if err != nil || !claimed || taken.ID != run.ID || taken.Attempts != 2 || taken.LeaseOwner != "b" {
		t.Fatalf("reclaim = %+v, %v, %v", taken, claimed, err)
	}
	if err := db.RenewLease(ctx, run.ID, "a", time.Minute); !errors.Is(err, jobs.ErrLeaseLost) {
		t.Fatalf("old owner renew = %v, want ErrLeaseLost", err)
	}
	if err := db.FinishRun(ctx, run.ID, "a", jobs.RunOutcome{Status: jobs.RunSucceeded}); !errors.Is(err, jobs.ErrLeaseLost) {
		t.Fatalf("old owner finish = %v, want ErrLeaseLost", err)
	}
	if err := db.FinishRun(ctx, run.ID, "b", jobs.RunOutcome{Status: jobs.RunSucceeded, TokensIn: 10, TokensOut: 3}); err != nil {
		t.Fatal(err)
	}
	runs, err := db.RecentRuns(ctx, j.ID, 10)
	if err != nil || len(runs) != 2 {
		t.Fatalf("runs = %+v, %v", runs, err)
	}
	if runs[0].Status != jobs.RunSkipped || runs[1].Status != jobs.RunSucceeded || runs[1].TokensIn != 10 || runs[1].FinishedAt.IsZero() {
		t.Fatalf("runs = %+v", runs)
	}
}

func TestFinishRunRetry(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	j := newJob(t, ctx, db, "retry")
	slot := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	run, _, err := db.ClaimSlot(ctx, j.ID, slot, "a", time.Minute, jobs.OverlapSkip, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.FinishRun(ctx, run.ID, "a", jobs.RunOutcome{Status: jobs.RunPending, RetryAt: time.Now().Add(time.Hour), Error: "boom"}); err != nil {
		t.Fatal(err)
	}
	if _, claimed, err := db.ClaimSlot(ctx, j.ID, slot, "b", time.Minute, jobs.OverlapSkip, false); err != nil || claimed {
		t.Fatalf("claim before retry is due = %v, %v", claimed, err)
	}
	if err := db.FinishRun(ctx, run.ID, "a", jobs.RunOutcome{Status: jobs.RunFailed}); !errors.Is(err, jobs.ErrLeaseLost) {
		t.Fatalf("finish a pending run = %v, want ErrLeaseLost", err)
	}
	runs, _ := db.RecentRuns(ctx, j.ID, 1)
	if len(runs) != 1 || runs[0].Status != jobs.RunPending || runs[0].Error != "boom" {
		t.Fatalf("runs = %+v", runs)
	}
}

// TestDeadOwnersRunIsTakenOverAtOnce: a run whose owner stopped sending
// heartbeats is due (and reclaimable) long before its lease ends, so the
// job's later slots are not skipped for a whole lease after a crash.
func TestDeadOwnersRunIsTakenOverAtOnce(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	j := newJob(t, ctx, db, "crashy")
	slot := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	for _, owner := range []string{"dead", "alive"} {
		if err := db.Heartbeat(ctx, owner); err != nil {
			t.Fatal(err)
		}
	}
	run, claimed, err := db.ClaimSlot(ctx, j.ID, slot, "dead", time.Hour, jobs.OverlapSkip, false)
	if err != nil || !claimed {
		t.Fatalf("claim = %v, %v", claimed, err)
	}
	if due, err := db.DueRuns(ctx, 10); err != nil || len(due) != 0 {
		t.Fatalf("due while the owner is alive = %+v, %v", due, err)
	}
	if _, err := db.Pool().Exec(ctx, `UPDATE replicas SET seen_at = now() - interval '1 minute' WHERE owner = 'dead'`); err != nil {
		t.Fatal(err)
	}
	due, err := db.DueRuns(ctx, 10)
	if err != nil || len(due) != 1 || due[0].ID != run.ID {
		t.Fatalf("due after the owner died = %+v, %v", due, err)
	}
	taken, claimed, err := db.ClaimSlot(ctx, j.ID, slot, "alive", time.Hour, jobs.OverlapSkip, false)
	if err != nil || !claimed || taken.ID != run.ID || taken.LeaseOwner != "alive" || taken.Attempts != 2 {
		t.Fatalf("take over = %+v, %v, %v", taken, claimed, err)
	}
	if due, err := db.DueRuns(ctx, 10); err != nil || len(due) != 0 {
		t.Fatalf("due after the take-over = %+v, %v", due, err)
	}
}

// A run's finish and its reply's outbox row commit together: an owner that
// lost the run queues nothing, and a reply queued already (by an earlier
// attempt) is not queued twice.
func TestFinishWithReply(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	j := newJob(t, ctx, db, "report")
	slot := time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)
	run, claimed, err := db.ClaimSlot(ctx, j.ID, slot, "a", time.Minute, jobs.OverlapSkip, false)
	if err != nil || !claimed {
		t.Fatalf("claim = %v, %v", claimed, err)
	}
	reply := bot.OutboxMessage{Session: "default/job:report", SourceSeq: 2, To: j.Target, Text: "the report"}
	queued := func() int {
		t.Helper()
		var n int
		if err := db.Pool().QueryRow(ctx, `SELECT count(*) FROM outbox WHERE session_key = $1`, reply.Session).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	out := jobs.RunOutcome{TokensIn: 10, TokensOut: 3}
	if err := db.FinishWithReply(ctx, run.ID, "b", out, reply); !errors.Is(err, jobs.ErrLeaseLost) || queued() != 0 {
		t.Fatalf("another owner's finish = %v with %d rows queued; want ErrLeaseLost and none", err, queued())
	}
	if err := db.FinishWithReply(ctx, run.ID, "a", out, reply); err != nil || queued() != 1 {
		t.Fatalf("the owner's finish = %v with %d rows queued; want one", err, queued())
	}
	runs, err := db.RecentRuns(ctx, j.ID, 1)
	if err != nil || len(runs) != 1 || runs[0].Status != jobs.RunSucceeded || runs[0].TokensIn != 10 || runs[0].FinishedAt.IsZero() {
		t.Fatalf("run after finish = %+v, %v", runs, err)
	}
	if err := db.FinishWithReply(ctx, run.ID, "a", out, reply); !errors.Is(err, jobs.ErrLeaseLost) || queued() != 1 {
		t.Fatalf("finishing a finished run = %v with %d rows queued; want ErrLeaseLost and still one", err, queued())
	}
	// A taken-over attempt that finds the reply queued already.
	next := slot.Add(time.Hour)
	run2, claimed, err := db.ClaimSlot(ctx, j.ID, next, "a", time.Minute, jobs.OverlapSkip, false)
	if err != nil || !claimed {
		t.Fatalf("claim of the next slot = %v, %v", claimed, err)
	}
	if err := db.FinishWithReply(ctx, run2.ID, "a", out, reply); err != nil || queued() != 1 {
		t.Fatalf("finish with a reply queued before = %v with %d rows; want the run finished and one row", err, queued())
	}
}
