package usage

import (
	"testing"
	"time"
)

// TestPeriods: the day, week (from Monday) and month are UTC, whatever
// the clock's zone, a Sunday belonging to the week that began on Monday.
func TestPeriods(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	inTokyo := time.Date(2026, 12, 6, 8, 0, 0, 0, tokyo) // Saturday 23:00 in UTC
	ps := periods(inTokyo)
	want := []time.Time{
		time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	}
	for i, p := range ps {
		if !p.Start.Equal(want[i]) || p.Start.Location() != time.UTC {
			t.Errorf("%s starts %v, want %v", p.Name, p.Start, want[i])
		}
	}
	if w := periods(time.Date(2026, 12, 6, 23, 59, 0, 0, time.UTC))[1].Start; !w.Equal(want[1]) {
		t.Errorf("Sunday's week starts %v", w)
	}
	if w := periods(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC))[1].Start; !w.Equal(time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("Monday's week starts %v", w)
	}
}
