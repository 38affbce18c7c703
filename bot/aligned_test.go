package bot

import (
	"testing"
	"time"
)

func TestUntilAlignedWakesIntervalsTogether(t *testing.T) {
	start := time.Now()
	for _, step := range []time.Duration{0, 3 * time.Millisecond, 400 * time.Millisecond, 999 * time.Millisecond, 7 * time.Second} {
		now := start.Add(step)
		second := now.Add(untilAligned(now, time.Second))
		if w := untilAligned(now, time.Second); w <= 0 || w > time.Second {
			t.Fatalf("untilAligned(1s) = %v, want in (0, 1s]", w)
		}
		// The next 2 s and 5 s moments are 1 s moments too.
		for _, d := range []time.Duration{2 * time.Second, 5 * time.Second} {
			w := untilAligned(now, d)
			if w <= 0 || w > d {
				t.Fatalf("untilAligned(%v) = %v, want in (0, %v]", d, w, d)
			}
			at := now.Add(w)
			if off := at.Sub(second) % time.Second; off != 0 {
				t.Errorf("the %v moment at %v is %v off the 1 s moments", d, at, off)
			}
		}
		// Two loops that ask at different moments of the same second wake
		// together.
		later := now.Add(untilAligned(now, time.Second) / 2)
		if a, b := now.Add(untilAligned(now, time.Second)), later.Add(untilAligned(later, time.Second)); !a.Equal(b) {
			t.Errorf("asked %v apart, woken at %v and %v", later.Sub(now), a, b)
		}
	}
	if w := untilAligned(start, 0); w != 0 {
		t.Errorf("untilAligned(0) = %v", w)
	}
}
