package bot

import (
	"errors"
	"testing"
	"time"
)

// RunRecovery's first pass looks at every session of any age, a page per
// pass until a page lists none; later passes at the sessions active since
// the last successful pass, except one recent pass every recentEvery after
// the last such pass that succeeded, and a pass over every session once
// recent passes have failed for allAfter (a full pass counts as a recent
// one).
func TestRecoveryPassesLookAtEverySessionOnlyWhenNeeded(t *testing.T) {
	p := recoveryPasses{recentEvery: 30 * time.Second, allAfter: 30 * time.Minute}
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	everything := UnfinishedQuery{}
	full := UnfinishedQuery{OlderThan: RecoverOlderThan}
	fullAfter := func(key string) UnfinishedQuery { return UnfinishedQuery{OlderThan: RecoverOlderThan, After: key} }
	recent := UnfinishedQuery{OlderThan: RecoverOlderThan, WrittenWithin: RecoverWrittenWithin}
	// A quick pass looks back to where the last successful one's window
	// ended, less the slack.
	just := func(sinceLast time.Duration) UnfinishedQuery {
		return UnfinishedQuery{OlderThan: RecoverOlderThan, WrittenWithin: min(sinceLast+RecoverOlderThan+recoverySlack, RecoverJustWritten)}
	}
	failed := errors.New("postgres unreachable")
	steps := []struct {
		at   time.Duration
		last string // the last session the pass listed
		err  error
		want UnfinishedQuery
	}{
		{0, "", failed, everything},
		{time.Second, "a/telegram:9", nil, full}, // the first full pass failed
		{2 * time.Second, "", failed, fullAfter("a/telegram:9")},
		{3 * time.Second, "", nil, fullAfter("a/telegram:9")},         // that page failed
		{4 * time.Second, "a/telegram:1", nil, just(3 * time.Second)}, // and the pass counted from its first page
		{5 * time.Second, "", nil, just(time.Second)},
		{6 * time.Second, "", failed, just(time.Second)},
		{7 * time.Second, "", nil, just(2 * time.Second)}, // back to the last one that worked
		{31*time.Second - time.Millisecond, "", nil, just(24*time.Second - time.Millisecond)},
		{31 * time.Second, "", failed, recent},
		{32 * time.Second, "", nil, recent}, // the last one failed
		{33 * time.Second, "", nil, just(time.Second)},
		{62 * time.Second, "", nil, recent},
		{63 * time.Second, "", nil, just(time.Second)},
		{92 * time.Second, "", failed, recent},
		{95 * time.Second, "", failed, recent},
		{30*time.Minute + 62*time.Second - time.Millisecond, "", failed, recent},
		{30*time.Minute + 62*time.Second, "b/slack:C1", nil, full}, // recent passes failed for 30 minutes
		{30*time.Minute + 63*time.Second, "", nil, fullAfter("b/slack:C1")},
		{30*time.Minute + 64*time.Second, "", nil, just(2 * time.Second)},
		{30*time.Minute + 92*time.Second, "", nil, recent},
	}
	for _, s := range steps {
		began := t0.Add(s.at)
		q := p.next(began)
		if q != s.want {
			t.Fatalf("pass at %v: %+v, want %+v", s.at, q, s.want)
		}
		p.ran(q, began, s.last, s.err)
	}
}
