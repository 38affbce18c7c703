package main

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/tools/scrub"
)

func TestLoggerScrubsSecretsEverywhere(t *testing.T) {
	var buf bytes.Buffer
	log := newLogger(&buf, "debug", "json", scrub.New("hunter2-very-secret"))
	log = log.With("dsn", "postgres://u:hunter2-very-secret@h/db")
	log.Info("connecting with hunter2-very-secret",
		"err", errors.New("auth failed for hunter2-very-secret"),
		"nested", map[string]string{"k": "hunter2-very-secret"},
		"plain", "fine")
	out := buf.String()
	if strings.Contains(out, "hunter2-very-secret") {
		t.Fatalf("log leaks the secret: %s", out)
	}
	for _, want := range []string{`"plain":"fine"`, "connecting with", scrub.Redacted} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q: %s", want, out)
		}
	}
}

// noTime drops the time from log lines, so two handlers' lines compare.
func noTime(groups []string, a slog.Attr) slog.Attr {
	if len(groups) == 0 && a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// The scrubbing handler hands With's attributes on only when a line is
// logged; the lines must be those slog's own handlers write when given the
// attributes at once, groups and nested Withs included.
func TestLoggerWithWritesWhatSlogWrites(t *testing.T) {
	script := func(log *slog.Logger) {
		log.Info("plain", "k", 1)
		a := log.With("session", "a/telegram:1", "n", 2)
		a.Debug("below the level")
		a.Info("first", "x", "y")
		a.Info("second")
		b := a.With("chat", "42").WithGroup("g").With("inner", true)
		b.Warn("grouped", "z", 3)
		a.With().WithGroup("h").Info("empty with", "w", 4)
		log.With("only", "once").Error("one line")
		log.WithGroup("top").With("t", 5).WithGroup("deeper").Info("two groups", "d", 6)
	}
	for _, format := range []string{"json", "text"} {
		var got, want bytes.Buffer
		opts := &slog.HandlerOptions{Level: slog.LevelInfo, ReplaceAttr: noTime}
		var plain, next slog.Handler = slog.NewTextHandler(&want, opts), slog.NewTextHandler(&got, opts)
		if format == "json" {
			plain, next = slog.NewJSONHandler(&want, opts), slog.NewJSONHandler(&got, opts)
		}
		script(slog.New(&scrubHandler{next: next, s: scrub.New("not-in-these-lines")}))
		script(slog.New(plain))
		if got.String() != want.String() {
			t.Errorf("%s:\n got  %s\n want %s", format, got.String(), want.String())
		}
		if n := strings.Count(got.String(), "\n"); n != 7 {
			t.Errorf("%s: %d lines, want 7: %s", format, n, got.String())
		}
	}
}

// With's attributes are scrubbed wherever they sit, and a logger made by
// With may be used by several goroutines from its first line on.
func TestLoggerWithScrubsAndServesGoroutines(t *testing.T) {
	const secret = "hunter2-very-secret"
	var mu sync.Mutex
	var buf bytes.Buffer
	log := newLogger(lockedWriter{&mu, &buf}, "info", "json", scrub.New(secret))
	l := log.With("a", "x "+secret).WithGroup("g").With("b", secret, "c", errors.New("e "+secret))
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { l.Info("line", "i", i) })
	}
	wg.Wait()
	out := buf.String()
	if strings.Contains(out, secret) {
		t.Fatalf("log leaks the secret: %s", out)
	}
	if n := strings.Count(out, `"a":"x `+scrub.Redacted+`","g":{"b":"`+scrub.Redacted+`","c":"e `+scrub.Redacted+`"`); n != 8 {
		t.Errorf("%d of 8 lines carry the scrubbed attributes: %s", n, out)
	}
}

// lockedWriter serializes writes from several goroutines.
type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (w lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// BenchmarkLoggerPerMessage is what the pipeline does with its loggers for
// a message: a logger with the message's platform, chat and user, another
// with its session, and a debug line that the info level drops.
func BenchmarkLoggerPerMessage(b *testing.B) {
	log := newLogger(io.Discard, "info", "text", scrub.New("hunter2-very-secret", "another-secret-value"))
	b.ReportAllocs()
	for b.Loop() {
		l := log.With("platform", "telegram", "chat", "7639392380183", "user", "telegram:7639392380183")
		l.With("session", "default/telegram:7639392380183").Debug("run starts", "seq", 42)
	}
}
