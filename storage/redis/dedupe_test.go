package redis_test

import (
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

func TestFirstSeen(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			ctx := testContext(t)
			first, err := s.FirstSeen(ctx, "telegram:update:1", time.Minute)
			if err != nil || !first {
				t.Fatalf("FirstSeen first call = %v, %v; want true", first, err)
			}
			again, err := s.FirstSeen(ctx, "telegram:update:1", time.Minute)
			if err != nil || again {
				t.Fatalf("FirstSeen second call = %v, %v; want false", again, err)
			}
			other, err := s.FirstSeen(ctx, "telegram:update:2", time.Minute)
			if err != nil || !other {
				t.Errorf("FirstSeen other key = %v, %v; want true", other, err)
			}
		})
	}
}

func TestFirstSeenPrefixesAreIndependent(t *testing.T) {
	url := redistest.URL(t)
	a := openStore(t, url, redistest.Prefix(t))
	b := openStore(t, url, redistest.Prefix(t))
	ctx := testContext(t)
	if first, err := a.FirstSeen(ctx, "same", time.Minute); err != nil || !first {
		t.Fatalf("store a FirstSeen = %v, %v; want true", first, err)
	}
	if first, err := b.FirstSeen(ctx, "same", time.Minute); err != nil || !first {
		t.Errorf("store b (other prefix) FirstSeen = %v, %v; want true", first, err)
	}
}

func TestFirstSeenRejectsNonPositiveTTL(t *testing.T) {
	s := openEmbedded(t)
	if _, err := s.FirstSeen(testContext(t), "k", 0); err == nil {
		t.Error("FirstSeen with ttl 0: error = nil, want error (a key without expiry would never be forgotten)")
	}
}

// TestFirstSeenExpiresByWallClock checks that a key is forgotten once its
// TTL has passed in real time — on the embedded server too, where nothing
// calls FastForward.
func TestFirstSeenExpiresByWallClock(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			s := b.open(t)
			ctx := testContext(t)
			const ttl = 1500 * time.Millisecond
			if first, err := s.FirstSeen(ctx, "ttl", ttl); err != nil || !first {
				t.Fatalf("FirstSeen = %v, %v; want true", first, err)
			}
			if again, err := s.FirstSeen(ctx, "ttl", ttl); err != nil || again {
				t.Fatalf("FirstSeen right after = %v, %v; want false", again, err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				time.Sleep(100 * time.Millisecond)
				seen, err := s.FirstSeen(ctx, "ttl", ttl)
				if err != nil {
					t.Fatalf("FirstSeen while polling: %v", err)
				}
				if seen {
					return // expired and recorded anew
				}
			}
			t.Fatalf("key with ttl %s still present after 10s of wall-clock time", ttl)
		})
	}
}
