package agentcore

import (
	"fmt"
	"testing"
)

// seqs returns messages with the seqs from..to.
func seqs(from, to int64) []Message {
	var out []Message
	for s := from; s <= to; s++ {
		out = append(out, Message{Role: RoleUser, Seq: s})
	}
	return out
}

// A full window starts at a multiple of a quarter of the limit, so its
// start holds while that many messages arrive; a window that is not full,
// or too small to step, is left alone.
func TestSteppedWindow(t *testing.T) {
	tests := []struct {
		msgs      []Message
		limit     int
		wantFirst int64
	}{
		{seqs(1, 5), 8, 1},     // the whole session
		{seqs(1, 8), 8, 2},     // step 2: the first even seq
		{seqs(2, 9), 8, 2},     // holds
		{seqs(3, 10), 8, 4},    // moves by a step
		{seqs(4, 11), 8, 4},    // holds
		{seqs(39, 88), 50, 48}, // step 12
		{seqs(48, 97), 50, 48},
		{seqs(49, 98), 50, 60},
		{seqs(10, 16), 7, 10}, // step 1: slides as before
	}
	for _, tc := range tests {
		t.Run(fmt.Sprintf("%d..%d of %d", tc.msgs[0].Seq, tc.msgs[len(tc.msgs)-1].Seq, tc.limit), func(t *testing.T) {
			got := steppedWindow(tc.msgs, tc.limit)
			if got[0].Seq != tc.wantFirst || got[len(got)-1].Seq != tc.msgs[len(tc.msgs)-1].Seq {
				t.Fatalf("window %d..%d, want %d..%d", got[0].Seq, got[len(got)-1].Seq, tc.wantFirst, tc.msgs[len(tc.msgs)-1].Seq)
			}
			if step := tc.limit / windowSteps; len(got) < tc.limit-step+1 && len(tc.msgs) == tc.limit {
				t.Fatalf("%d messages shown, want at least %d", len(got), tc.limit-step+1)
			}
		})
	}
}
