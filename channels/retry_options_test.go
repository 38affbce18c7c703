package channels

import (
	"testing"
	"time"
)

func TestRetryWithDefaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		in, out Retry
	}{
		{"all zero", Retry{}, Retry{RetryMin: time.Second, RetryMax: 30 * time.Second, MaxRetries: 3, MaxRetryWait: time.Minute}},
		{"set fields kept", Retry{RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, MaxRetries: 1, MaxRetryWait: time.Second},
			Retry{RetryMin: 10 * time.Millisecond, RetryMax: 50 * time.Millisecond, MaxRetries: 1, MaxRetryWait: time.Second}},
		{"max below min is raised to min", Retry{RetryMin: 2 * time.Minute}, Retry{RetryMin: 2 * time.Minute, RetryMax: 2 * time.Minute, MaxRetries: 3, MaxRetryWait: time.Minute}},
		{"negative is unset", Retry{RetryMin: -1, MaxRetries: -5}, Retry{RetryMin: time.Second, RetryMax: 30 * time.Second, MaxRetries: 3, MaxRetryWait: time.Minute}},
	} {
		if got := tc.in.WithDefaults(30 * time.Second); got != tc.out {
			t.Errorf("%s: WithDefaults(%+v) = %+v, want %+v", tc.name, tc.in, got, tc.out)
		}
	}
}
