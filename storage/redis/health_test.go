package redis_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
)

// startMiniredis starts a Redis the test can stop and restart.
func startMiniredis(t *testing.T) *miniredis.Miniredis {
	t.Helper()
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		t.Fatalf("start miniredis: %v", err)
	}
	t.Cleanup(m.Close)
	return m
}

// TestOutageLoggedOnce: while Redis is down every call fails (fast, once
// the outage is known), but the log gets one warning for the outage and one
// line when Redis is back.
func TestOutageLoggedOnce(t *testing.T) {
	m := startMiniredis(t)
	logs := &channeltest.Log{}
	s := openStoreWith(t, "redis://"+m.Addr(), sbredis.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	ctx := testContext(t)
	if !s.Available() {
		t.Fatal("Available() = false with Redis up")
	}
	for outage := 1; outage <= 2; outage++ {
		m.Close()
		failed, start := 0, time.Now()
		for range 20 {
			if _, err := s.FirstSeen(ctx, "k", time.Minute); err != nil {
				failed++
			}
			if _, _, err := s.Allow(ctx, "rl", bot.Rate{Count: 5, Per: time.Second}); err != nil {
				failed++
			}
			if _, err := s.Obtain(ctx, "session", time.Minute); err != nil {
				failed++
			}
		}
		t.Logf("outage %d: 60 calls failed in %s", outage, time.Since(start))
		if failed != 60 {
			t.Fatalf("outage %d: %d of 60 calls failed with Redis stopped, want all", outage, failed)
		}
		if s.Available() {
			t.Errorf("outage %d: Available() = true with Redis stopped", outage)
		}
		if err := m.Restart(); err != nil {
			t.Fatalf("restart miniredis: %v", err)
		}
		deadline := time.Now().Add(10 * time.Second)
		for !s.Available() && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond) // the heartbeat notices within a second
		}
		if !s.Available() {
			t.Fatalf("outage %d: Available() still false 10s after Redis came back", outage)
		}
		if _, err := s.FirstSeen(ctx, "after", time.Minute); err != nil {
			t.Fatalf("outage %d: FirstSeen after Redis came back: %v", outage, err)
		}
		out := logs.String()
		if n := strings.Count(out, "redis unreachable"); n != outage {
			t.Errorf("after outage %d: %d outage warnings, want one per outage:\n%s", outage, n, out)
		}
		if n := strings.Count(out, "redis reachable again"); n != outage {
			t.Errorf("after outage %d: %d recovery lines, want one per outage:\n%s", outage, n, out)
		}
	}
}

// TestIdleStoreNoticesAnOutage: a store that holds no lock and is asked
// nothing still pings Redis now and then (IdleProbe), so an outage is
// known, and calls fail fast, before a message's first call would wait
// out the dial retries; the end of the outage is noticed as well.
func TestIdleStoreNoticesAnOutage(t *testing.T) {
	m := startMiniredis(t)
	logs := &channeltest.Log{}
	s := openStoreWith(t, "redis://"+m.Addr(), sbredis.Options{IdleProbe: 100 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	// Generous: a probe gives up after a second, and go-redis goes on
	// dialling the stopped server that long for the first few probes (about
	// 7 s here) before a probe gets the refusal back.
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for end := time.Now().Add(30 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatalf("not noticed within 30 s: %s\n%s", what, logs.String())
			}
		}
	}
	start := time.Now()
	m.Close()
	waitFor("Redis went away", func() bool { return !s.Available() })
	t.Logf("the outage noticed after %s", time.Since(start))
	if err := m.Restart(); err != nil {
		t.Fatalf("restart miniredis: %v", err)
	}
	waitFor("Redis came back", s.Available)
	if out := logs.String(); !strings.Contains(out, "redis unreachable") || !strings.Contains(out, "redis reachable again") {
		t.Errorf("log %q; want the outage and its end", out)
	}
}
