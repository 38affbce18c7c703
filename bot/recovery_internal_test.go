package bot

import (
	"errors"
	"testing"
	"time"
)

// RunRecovery's first pass looks at every session of any age; later passes
// at the sessions just written to, except one recent pass every recentEvery
// and one full pass every fullEvery after the last such pass that
// succeeded (a full pass counts as a recent one).
func TestRecoveryPassesLookAtEverySessionNowAndThen(t *testing.T) {
	p := recoveryPasses{fullEvery: 5 * time.Minute, recentEvery: 30 * time.Second}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	everything := UnfinishedQuery{}
	full := UnfinishedQuery{OlderThan: RecoverOlderThan}
	recent := UnfinishedQuery{OlderThan: RecoverOlderThan, WrittenWithin: RecoverWrittenWithin}
	just := UnfinishedQuery{OlderThan: RecoverOlderThan, WrittenWithin: RecoverJustWritten}
	failed := errors.New("postgres unreachable")
	steps := []struct {
		at   time.Duration
		err  error
		want UnfinishedQuery
	}{
		{0, failed, everything},
		{time.Second, nil, full}, // the first full pass failed
		{2 * time.Second, nil, just},
		{31*time.Second - time.Millisecond, nil, just},
		{31 * time.Second, failed, recent},
		{32 * time.Second, nil, recent}, // the last one failed
		{33 * time.Second, nil, just},
		{62 * time.Second, nil, recent},
		{5*time.Minute + time.Second - time.Millisecond, nil, recent},
		{5*time.Minute + time.Second, failed, full},
		{5*time.Minute + 2*time.Second, nil, full}, // the last one failed
		{5*time.Minute + 3*time.Second, nil, just}, // and it counted as a recent one
		{5*time.Minute + 32*time.Second, nil, recent},
		{10*time.Minute + 2*time.Second, nil, full},
	}
	for _, s := range steps {
		began := t0.Add(s.at)
		q := p.next(began)
		if q != s.want {
			t.Fatalf("pass at %v: %+v, want %+v", s.at, q, s.want)
		}
		p.ran(q, began, s.err)
	}
}
