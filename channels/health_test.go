package channels

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"
)

func TestHealthStreaks(t *testing.T) {
	var buf bytes.Buffer
	h := NewHealth("telegram", slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo})),
		func(err error) error { return errors.New(strings.ReplaceAll(err.Error(), "TOKEN", "[REDACTED]")) })
	ctx := context.Background()
	if h.Ready(ctx) == nil {
		t.Fatal("ready before any success")
	}
	for range 5 {
		h.Failed("getUpdates", errors.New("dial /botTOKEN/getUpdates: refused"), time.Second)
	}
	if err := h.Ready(ctx); err == nil || strings.Contains(err.Error(), "TOKEN") {
		t.Fatalf("Ready after failures = %v", err)
	}
	if n := strings.Count(buf.String(), "unreachable"); n != 1 {
		t.Fatalf("%d warnings for one streak, want 1:\n%s", n, buf.String())
	}
	h.Succeeded("getUpdates")
	if err := h.Ready(ctx); err != nil {
		t.Fatalf("Ready after success = %v", err)
	}
	if !strings.Contains(buf.String(), "reachable again") || !strings.Contains(buf.String(), "failed_attempts=5") {
		t.Fatalf("recovery not logged:\n%s", buf.String())
	}
}
