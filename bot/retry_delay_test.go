package bot

import (
	"testing"
	"time"
)

func TestRetryDelayDoublesUpToFiveMinutes(t *testing.T) {
	for _, tc := range []struct {
		base     time.Duration
		attempts int
		want     time.Duration
	}{
		{time.Second, 0, time.Second},
		{time.Second, 1, time.Second},
		{time.Second, 2, 2 * time.Second},
		{time.Second, 4, 8 * time.Second},
		{time.Second, 9, 256 * time.Second},
		{time.Second, 10, 5 * time.Minute},
		{time.Second, 1000, 5 * time.Minute},
		{30 * time.Second, 3, 2 * time.Minute},
		{10 * time.Minute, 1, 5 * time.Minute},
	} {
		if got := RetryDelay(tc.base, tc.attempts); got != tc.want {
			t.Errorf("RetryDelay(%v, %d) = %v, want %v", tc.base, tc.attempts, got, tc.want)
		}
	}
}
