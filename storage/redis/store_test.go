package redis_test

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
)

// closedPort returns a loopback port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if err := ln.Close(); err != nil {
		t.Fatalf("close listener: %v", err)
	}
	return port
}

func TestOpenUnreachableSaysWhereAndHidesPassword(t *testing.T) {
	port := strconv.Itoa(closedPort(t))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := sbredis.Open(ctx, "redis://:hunter2secret@127.0.0.1:"+port+"/0", sbredis.Options{})
	if err != nil {
		t.Fatalf("Open must connect lazily so the daemon starts while Redis is down; got %v", err)
	}
	defer s.Close()
	err = s.Ping(ctx)
	if err == nil {
		t.Fatal("Ping on a closed port: error = nil")
	}
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Open waited for the context deadline instead of failing on the refused connection: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"127.0.0.1:" + port, "unreachable", "redis.url"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not mention %q", msg, want)
		}
	}
	if strings.Contains(msg, "hunter2secret") {
		t.Errorf("error %q contains the password", msg)
	}
}

func TestPingFailsWhenServerGoes(t *testing.T) {
	e, err := sbredis.StartEmbedded(nil)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	s := openStore(t, e.URL(), "")
	ctx := testContext(t)
	if err := s.Ping(ctx); err != nil {
		t.Fatalf("Ping while up: %v", err)
	}
	e.Close()
	err = s.Ping(ctx)
	if err == nil {
		t.Fatal("Ping after the server closed: error = nil")
	}
	if !strings.Contains(err.Error(), "unreachable") {
		t.Errorf("Ping error %q does not say Redis is unreachable", err)
	}
}

func TestOpenRejectsBadURLWithoutLeakingPassword(t *testing.T) {
	for _, url := range []string{
		"",
		"http://:hunter2secret@127.0.0.1:6379",
		"redis://:hunter2secret@127.0.0.1:6379/notadb",
		"redis://:hunter2secret@127.0.0.1:port/0",
		"redis://:hunter2secret@[::1/0",
	} {
		_, err := sbredis.Open(testContext(t), url, sbredis.Options{})
		if err == nil {
			t.Errorf("Open(%q): error = nil", url)
			continue
		}
		if strings.Contains(err.Error(), "hunter2secret") {
			t.Errorf("Open(%q) error %q contains the password", url, err)
		}
	}
}

func TestEveryKeyCarriesThePrefix(t *testing.T) {
	e, err := sbredis.StartEmbedded(nil)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(e.Close)
	s := openStore(t, e.URL(), "tenant7:")
	ctx := testContext(t)
	if _, _, err := s.Allow(ctx, "user:1", bot.Rate{Count: 5, Per: time.Minute}); err != nil {
		t.Fatalf("Allow: %v", err)
	}
	if _, err := s.FirstSeen(ctx, "evt:1", time.Minute); err != nil {
		t.Fatalf("FirstSeen: %v", err)
	}
	if _, err := s.Obtain(ctx, "session:1", time.Minute); err != nil {
		t.Fatalf("Obtain: %v", err)
	}
	keys, err := s.Client().Keys(ctx, "*").Result()
	if err != nil {
		t.Fatalf("KEYS: %v", err)
	}
	if len(keys) != 4 {
		t.Errorf("keys = %q, want one each for the limiter, dedupe, lock and instance heartbeat", keys)
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "tenant7:") {
			t.Errorf("key %q lacks the prefix tenant7:", k)
		}
	}
}

func TestDefaultPrefix(t *testing.T) {
	e, err := sbredis.StartEmbedded(nil)
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(e.Close)
	s := openStore(t, e.URL(), "")
	if s.Prefix() != sbredis.DefaultPrefix {
		t.Errorf("Prefix() = %q, want %q", s.Prefix(), sbredis.DefaultPrefix)
	}
	if _, err := s.FirstSeen(testContext(t), "k", time.Minute); err != nil {
		t.Fatalf("FirstSeen: %v", err)
	}
	n, err := s.Client().Exists(testContext(t), sbredis.DefaultPrefix+"seen:k").Result()
	if err != nil || n != 1 {
		t.Errorf("EXISTS %sseen:k = %d, %v; want 1", sbredis.DefaultPrefix, n, err)
	}
}

// recordingHandler keeps every log record.
type recordingHandler struct {
	mu      sync.Mutex
	records []slog.Record
}

func (h *recordingHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.records = append(h.records, r)
	return nil
}
func (h *recordingHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recordingHandler) WithGroup(string) slog.Handler      { return h }

func TestStartEmbeddedWarnsOnceAndServesLoopback(t *testing.T) {
	h := &recordingHandler{}
	e, err := sbredis.StartEmbedded(slog.New(h))
	if err != nil {
		t.Fatalf("StartEmbedded: %v", err)
	}
	t.Cleanup(e.Close)
	if !strings.HasPrefix(e.URL(), "redis://127.0.0.1:") {
		t.Errorf("URL() = %q, want redis://127.0.0.1:<port>", e.URL())
	}
	s := openStore(t, e.URL(), "")
	for range 3 {
		if _, err := s.FirstSeen(testContext(t), "k", time.Minute); err != nil {
			t.Fatalf("FirstSeen: %v", err)
		}
	}
	warnings := 0
	for _, r := range h.records {
		if r.Level == slog.LevelWarn && strings.Contains(r.Message, "single replica only") && strings.Contains(r.Message, "redis.url") {
			warnings++
		}
	}
	if warnings != 1 {
		t.Errorf("got %d warnings about the in-process Redis, want exactly 1", warnings)
	}
}
