package jobs

import (
	"context"
	"time"
)

// DueJob is an enabled job whose next slot came due, locked by ClaimDue
// while it is planned.
type DueJob struct {
	Job
	// LastSlot is the newest slot of the job already handled (or when the
	// job was created or last came back from retirement).
	LastSlot time.Time
	// Busy is whether another run of the job is open (running, even with
	// an expired lease, or pending a retry).
	Busy bool
}

// SlotPlan is what ClaimDue does with one due job: it creates a running
// run for each slot in Claim (owned by the claimer) and a skipped run for
// each slot in Skip, then moves the job's LastSlot to Handled and its next
// due time to Next (zero: it never fires again).
type SlotPlan struct {
	Claim   []time.Time
	Skip    []time.Time
	Handled time.Time
	Next    time.Time
}

// ClaimedRun is a run ClaimDue claimed, with the job it belongs to.
type ClaimedRun struct {
	Job Job
	Run JobRun
}

// ClaimDueOptions says who claims due slots and how many jobs at once.
type ClaimDueOptions struct {
	Owner string
	Lease time.Duration
	// Limit is the most jobs locked and planned in one call.
	Limit int
	// Now is the scheduler's clock: jobs due at or before it are planned.
	Now time.Time
	// Beat also writes Owner's heartbeat in the same transaction when a
	// run is claimed (see bot.Liveness.Pin).
	Beat bool
}

// DueClaimer claims due slots in batches. ClaimDue locks up to Limit due
// jobs no other replica holds (skipping those that are locked), asks plan
// what to do with each, and applies every plan in the same transaction, so
// a slot is claimed exactly once and a job's next due time moves with the
// claim. A job with overlap queue whose previous run is still open is left
// until that run ends. It returns the runs claimed and how many jobs it
// locked (fewer than Limit: no more are due now).
type DueClaimer interface {
	ClaimDue(ctx context.Context, o ClaimDueOptions, plan func(DueJob) SlotPlan) (claimed []ClaimedRun, locked int, err error)
	// NextDue returns the earliest next due time of the enabled jobs
	// (zero: none is due ever).
	NextDue(ctx context.Context) (time.Time, error)
}

// planSlots decides what happens to a due job's slots up to now: every
// on-time slot, or the newest missed one per its catch-up policy (see
// dueSlots); a slot while another run is open is skipped, or under overlap
// queue waits for that run to end.
func planSlots(j DueJob, sched Schedule, now time.Time, grace, window time.Duration) SlotPlan {
	slots, examined := dueSlots(sched, j.CatchUp, j.LastSlot, now, grace, window)
	p := SlotPlan{Handled: j.LastSlot}
	busy := j.Busy
	for _, slot := range slots {
		if busy {
			if j.Overlap == OverlapQueue {
				p.Next = slot // planned again once the open run ends
				return p
			}
			p.Skip = append(p.Skip, slot)
		} else {
			p.Claim = append(p.Claim, slot)
			busy = true
		}
		p.Handled = slot
	}
	if examined.After(p.Handled) {
		p.Handled = examined
	}
	p.Next = sched.Next(maxTime(now, p.Handled))
	return p
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ConfigSyncResult names what a config sync changed.
type ConfigSyncResult struct {
	// Saved are the config jobs created or changed.
	Saved []string
	// Retired are the config jobs no longer in the config: they stop
	// running and leave listings, their run history kept.
	Retired []string
}

// ConfigSyncer makes the stored config-defined jobs match the config, in
// one transaction that one replica at a time holds (replicas starting
// together apply the same file once; the others find nothing to change).
// Jobs made in chat or by the agent are left alone.
type ConfigSyncer interface {
	SyncConfigJobs(ctx context.Context, want []Job) (ConfigSyncResult, error)
}
