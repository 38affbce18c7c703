package main

import (
	"context"
	"go.opentelemetry.io/otel/trace"
	"io"
	"log/slog"
	"strings"

	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools"
)

// newLogger builds the process logger. Every line goes through the
// scrubber: configured secrets never reach the log, whatever logged them.
func newLogger(w io.Writer, level, format string, s *tools.Scrubber) *slog.Logger {
	var lvl slog.Level
	switch strings.ToLower(level) {
	case "debug":
		lvl = slog.LevelDebug
	case "warn":
		lvl = slog.LevelWarn
	case "error":
		lvl = slog.LevelError
	default:
		lvl = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lvl}
	var h slog.Handler
	if format == "json" {
		h = slog.NewJSONHandler(w, opts)
	} else {
		h = slog.NewTextHandler(w, opts)
	}
	return slog.New(&scrubHandler{next: h, s: s})
}

// scrubHandler removes secrets from messages and string attributes.
type scrubHandler struct {
	next slog.Handler
	s    *tools.Scrubber
}

func (h *scrubHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle scrubs the record and, when it is logged with a context inside a
// trace (InfoContext…), adds the trace id.
func (h *scrubHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.s.Scrub(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.scrubAttr(a))
		return true
	})
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		out.AddAttrs(slog.String("trace_id", sc.TraceID().String()))
	}
	return h.next.Handle(ctx, out)
}

func (h *scrubHandler) scrubAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.s.Scrub(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		clean := make([]any, 0, len(attrs))
		for _, g := range attrs {
			clean = append(clean, h.scrubAttr(g))
		}
		return slog.Group(a.Key, clean...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.s.Scrub(err.Error()))
		}
		return slog.String(a.Key, h.s.Scrub(v.String()))
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h *scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = h.scrubAttr(a)
	}
	return &scrubHandler{next: h.next.WithAttrs(clean), s: h.s}
}

func (h *scrubHandler) WithGroup(name string) slog.Handler {
	return &scrubHandler{next: h.next.WithGroup(name), s: h.s}
}

// newScrubber returns a scrubber that knows every configured secret.
func newScrubber(cfg *config.Config) *tools.Scrubber {
	return tools.NewScrubber(cfg.Secrets()...)
}
