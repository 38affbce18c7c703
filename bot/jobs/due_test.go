package jobs

import (
	"testing"
	"time"
)

// TestPlanSlots: what a due job's plan claims, skips and where it leaves
// the job, per catch-up and overlap policy.
func TestPlanSlots(t *testing.T) {
	sched, err := ParseSchedule("*/10 * * * *", "")
	if err != nil {
		t.Fatal(err)
	}
	at := func(hm string) time.Time {
		v, err := time.Parse("2006-01-02 15:04:05", "2026-03-01 "+hm)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	const grace, window = 30 * time.Second, time.Hour
	cases := []struct {
		name    string
		job     DueJob
		now     time.Time
		claim   []time.Time
		skip    []time.Time
		handled time.Time
		next    time.Time
	}{
		{name: "on time", job: DueJob{Job: Job{CatchUp: CatchUpLast}, LastSlot: at("09:50:00")}, now: at("10:00:05"),
			claim: []time.Time{at("10:00:00")}, handled: at("10:00:00"), next: at("10:10:00")},
		{name: "missed, catch up last runs the newest", job: DueJob{Job: Job{CatchUp: CatchUpLast}, LastSlot: at("09:00:00")}, now: at("09:45:00"),
			claim: []time.Time{at("09:40:00")}, handled: at("09:40:00"), next: at("09:50:00")},
		{name: "missed, catch up none drops them", job: DueJob{Job: Job{CatchUp: CatchUpNone}, LastSlot: at("09:00:00")}, now: at("09:45:00"),
			handled: at("09:40:00"), next: at("09:50:00")},
		{name: "missed beyond the window", job: DueJob{Job: Job{CatchUp: CatchUpLast}, LastSlot: at("06:00:00")}, now: at("09:45:00"),
			claim: []time.Time{at("09:40:00")}, handled: at("09:40:00"), next: at("09:50:00")},
		{name: "busy, overlap skip", job: DueJob{Job: Job{CatchUp: CatchUpLast, Overlap: OverlapSkip}, LastSlot: at("09:50:00"), Busy: true}, now: at("10:00:05"),
			skip: []time.Time{at("10:00:00")}, handled: at("10:00:00"), next: at("10:10:00")},
		{name: "busy, overlap queue waits", job: DueJob{Job: Job{CatchUp: CatchUpLast, Overlap: OverlapQueue}, LastSlot: at("09:50:00"), Busy: true}, now: at("10:00:05"),
			handled: at("09:50:00"), next: at("10:00:00")},
		{name: "not yet due", job: DueJob{Job: Job{CatchUp: CatchUpLast}, LastSlot: at("10:00:00")}, now: at("10:05:00"),
			handled: at("10:00:00"), next: at("10:10:00")},
	}
	for _, c := range cases {
		p := planSlots(c.job, sched, c.now, grace, window)
		if !equalTimes(p.Claim, c.claim) || !equalTimes(p.Skip, c.skip) || !p.Handled.Equal(c.handled) || !p.Next.Equal(c.next) {
			t.Errorf("%s: plan = %+v; want claim %v skip %v handled %s next %s", c.name, p, c.claim, c.skip, c.handled, c.next)
		}
	}
}

func equalTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}
