package jobs

import (
	"time"

	"github.com/robfig/cron/v3"
)

// wallSchedule fixes robfig's handling of daylight-saving changes for specs
// that fire at chosen hours (daily, weekly …): it matches the spec against
// local wall-clock time, so a time skipped by a spring-forward change fires
// right after the gap (02:30 → 03:30) and a time repeated by a fall-back
// change fires only the first time. Specs firing every hour keep robfig's
// real-time stepping, which is already right for them.
type wallSchedule struct {
	wall *cron.SpecSchedule // the spec, in UTC, applied to wall-clock times
	loc  *time.Location
}

// newZonedSchedule returns spec (parsed in UTC) as a schedule in loc.
func newZonedSchedule(utc cron.Schedule, inLoc cron.Schedule, loc *time.Location) cron.Schedule {
	spec, ok := utc.(*cron.SpecSchedule)
	if !ok || loc == time.UTC || everyHour(spec) {
		return inLoc
	}
	return wallSchedule{wall: spec, loc: loc}
}

// everyHour reports whether the spec matches every hour of the day.
func everyHour(s *cron.SpecSchedule) bool {
	const all = 1<<24 - 1
	return s.Hour&all == all
}

// Next returns the first slot strictly after `after`.
func (w wallSchedule) Next(after time.Time) time.Time {
	cur := w.toWall(after)
	for range 2000 {
		c := w.wall.Next(cur)
		if c.IsZero() {
			return time.Time{}
		}
		if inst := w.firstInstant(c); inst.After(after) {
			return inst
		}
		cur = c
	}
	return time.Time{}
}

// toWall renders t's local wall clock in loc as a UTC time.
func (w wallSchedule) toWall(t time.Time) time.Time {
	l := t.In(w.loc)
	return time.Date(l.Year(), l.Month(), l.Day(), l.Hour(), l.Minute(), l.Second(), l.Nanosecond(), time.UTC)
}

// firstInstant is the earliest instant whose wall clock in loc is c, or,
// when c falls in a gap, the instant the gap ends plus c's distance into it.
func (w wallSchedule) firstInstant(c time.Time) time.Time {
	_, before := c.Add(-26 * time.Hour).In(w.loc).Zone()
	_, after := c.Add(26 * time.Hour).In(w.loc).Zone()
	var best time.Time
	for _, off := range []int{before, after} {
		inst := c.Add(-time.Duration(off) * time.Second)
		if w.toWall(inst).Equal(c) && (best.IsZero() || inst.Before(best)) {
			best = inst
		}
	}
	if best.IsZero() {
		// In a gap: use the offset in force before it.
		best = c.Add(-time.Duration(before) * time.Second)
	}
	return best.In(w.loc)
}
