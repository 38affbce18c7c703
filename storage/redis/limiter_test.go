package redis_test

import (
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

func TestAllowLimitsEachKeyIndependently(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			ctx := testContext(t)
			r := bot.Rate{Count: 3, Per: time.Minute}
			for i := range r.Count {
				ok, retry, err := s.Allow(ctx, "user:a", r)
				if err != nil {
					t.Fatalf("Allow #%d: %v", i+1, err)
				}
				if !ok {
					t.Fatalf("Allow #%d denied (retry after %s), want allowed within the burst of %d", i+1, retry, r.Count)
				}
			}
			ok, retry, err := s.Allow(ctx, "user:a", r)
			if err != nil {
				t.Fatalf("Allow over limit: %v", err)
			}
			if ok {
				t.Fatalf("Allow #%d allowed, want denied", r.Count+1)
			}
			if retry <= 0 || retry > r.Per {
				t.Errorf("retryAfter = %s, want in (0, %s]", retry, r.Per)
			}
			ok, _, err = s.Allow(ctx, "user:b", r)
			if err != nil || !ok {
				t.Errorf("Allow on another key = %v, %v; want allowed", ok, err)
			}
		})
	}
}

func TestAllowRefillsAfterRetryAfter(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			ctx := testContext(t)
			r := bot.Rate{Count: 1, Per: 400 * time.Millisecond}
			if ok, _, err := s.Allow(ctx, "k", r); err != nil || !ok {
				t.Fatalf("first Allow = %v, %v; want allowed", ok, err)
			}
			ok, retry, err := s.Allow(ctx, "k", r)
			if err != nil || ok {
				t.Fatalf("second Allow = %v, %v; want denied", ok, err)
			}
			time.Sleep(retry + 50*time.Millisecond)
			if ok, _, err := s.Allow(ctx, "k", r); err != nil || !ok {
				t.Errorf("Allow after waiting retryAfter (%s) = %v, %v; want allowed", retry, ok, err)
			}
		})
	}
}

func TestAllowRejectsInvalidRate(t *testing.T) {
	s := openEmbedded(t)
	for _, r := range []bot.Rate{{Count: 0, Per: time.Minute}, {Count: 5, Per: 0}, {Count: -1, Per: time.Second}} {
		if _, _, err := s.Allow(testContext(t), "k", r); err == nil {
			t.Errorf("Allow(%+v) error = nil, want an invalid rate error", r)
		}
	}
}
