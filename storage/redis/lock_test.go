package redis_test

import (
	"errors"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
)

func TestLockObtainReleaseObtain(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			ctx := testContext(t)
			l, err := s.Obtain(ctx, "session:1", time.Minute)
			if err != nil {
				t.Fatalf("Obtain: %v", err)
			}
			_, err = s.Obtain(ctx, "session:1", time.Minute)
			if !errors.Is(err, bot.ErrLocked) {
				t.Fatalf("second Obtain error = %v, want bot.ErrLocked", err)
			}
			other, err := s.Obtain(ctx, "session:2", time.Minute)
			if err != nil {
				t.Fatalf("Obtain of another key: %v", err)
			}
			if err := other.Release(ctx); err != nil {
				t.Errorf("Release other: %v", err)
			}
			if err := l.Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
			again, err := s.Obtain(ctx, "session:1", time.Minute)
			if err != nil {
				t.Fatalf("Obtain after Release: %v", err)
			}
			if err := again.Release(ctx); err != nil {
				t.Errorf("Release again: %v", err)
			}
		})
	}
}

func TestLockRefreshExtendsTTL(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			ctx := testContext(t)
			l, err := s.Obtain(ctx, "session:r", 2*time.Second)
			if err != nil {
				t.Fatalf("Obtain: %v", err)
			}
			if err := l.Refresh(ctx, time.Hour); err != nil {
				t.Fatalf("Refresh: %v", err)
			}
			ttl, err := l.(*sbredis.Lock).TTL(ctx)
			if err != nil {
				t.Fatalf("TTL: %v", err)
			}
			if ttl <= 2*time.Second || ttl > time.Hour {
				t.Errorf("TTL after Refresh(1h) = %s, want in (2s, 1h]", ttl)
			}
		})
	}
}

func TestLockLostAfterExpiry(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			ctx := testContext(t)
			first, err := s.Obtain(ctx, "session:x", 300*time.Millisecond)
			if err != nil {
				t.Fatalf("Obtain: %v", err)
			}
			var second bot.Lock
			deadline := time.Now().Add(10 * time.Second)
			for second == nil && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
				second, err = s.Obtain(ctx, "session:x", time.Minute)
				if err != nil && !errors.Is(err, bot.ErrLocked) {
					t.Fatalf("Obtain while polling: %v", err)
				}
			}
			if second == nil {
				t.Fatal("lock with ttl 300ms still held after 10s")
			}
			if err := first.Refresh(ctx, time.Minute); !errors.Is(err, sbredis.ErrNotHeld) {
				t.Errorf("Refresh of lost lock error = %v, want ErrNotHeld", err)
			}
			if err := first.Release(ctx); !errors.Is(err, sbredis.ErrNotHeld) {
				t.Errorf("Release of lost lock error = %v, want ErrNotHeld", err)
			}
			if ttl, err := second.(*sbredis.Lock).TTL(ctx); err != nil || ttl <= 0 {
				t.Errorf("new holder's TTL = %s, %v; want its lock untouched by the old holder", ttl, err)
			}
		})
	}
}
