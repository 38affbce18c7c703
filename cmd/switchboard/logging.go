package main

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"

	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools/scrub"
)

// newLogger builds the process logger. Every line goes through the
// scrubber: configured secrets never reach the log, whatever logged them.
func newLogger(w io.Writer, level, format string, s *scrub.Scrubber) *slog.Logger {
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
//
// The attributes given to With are scrubbed and handed to the next handler
// (which formats them) only when the first line is logged through it: the
// pipeline makes loggers with a message's session, chat and user for every
// message, and most of them log nothing at the configured level, so a
// logger that logs nothing costs no scrubbing.
type scrubHandler struct {
	next slog.Handler
	s    *scrub.Scrubber
	// pending are With's attributes not yet given to next, and bound is
	// next with them, made once (nil when there are none).
	pending []slog.Attr
	bound   *boundHandler
}

// boundHandler is a scrubHandler's next handler with its pending
// attributes, made on first use.
type boundHandler struct {
	once sync.Once
	h    slog.Handler
}

// target is the handler lines go to: next with the pending attributes.
func (h *scrubHandler) target() slog.Handler {
	if h.bound == nil {
		return h.next
	}
	h.bound.once.Do(func() {
		clean := make([]slog.Attr, len(h.pending))
		for i, a := range h.pending {
			clean[i] = h.scrubAttr(a)
		}
		h.bound.h = h.next.WithAttrs(clean)
	})
	return h.bound.h
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
	return h.target().Handle(ctx, out)
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

// WithAttrs keeps attrs for the first line logged (see scrubHandler).
func (h *scrubHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	pending := make([]slog.Attr, 0, len(h.pending)+len(attrs))
	pending = append(append(pending, h.pending...), attrs...)
	return &scrubHandler{next: h.next, s: h.s, pending: pending, bound: &boundHandler{}}
}

// WithGroup gives the pending attributes to the next handler first: they
// belong outside the group.
func (h *scrubHandler) WithGroup(name string) slog.Handler {
	return &scrubHandler{next: h.target().WithGroup(name), s: h.s}
}

// newScrubber returns a scrubber that knows every configured secret.
func newScrubber(cfg *config.Config) *scrub.Scrubber {
	return scrub.New(cfg.Secrets()...)
}
