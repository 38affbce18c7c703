package bot

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Span names: one trace per message spans inbound → run → each model and
// tool call (agentcore) → each outbox send, with the queries and Redis
// commands of each step beneath it.
const (
	spanInbound = "switchboard.inbound"
	spanRun     = "switchboard.run"
	spanSend    = "switchboard.outbox.send"
)

// tracerOr returns t, or a tracer that records nothing.
func tracerOr(t trace.Tracer) trace.Tracer {
	if t == nil {
		return noop.NewTracerProvider().Tracer("")
	}
	return t
}

// withParent returns ctx carrying parent as its current span, so that the
// next span started from it continues parent's trace (a message's run
// starts on a lane goroutine, its reply's send on the dispatcher's).
func withParent(ctx context.Context, parent trace.SpanContext) context.Context {
	if !parent.IsValid() {
		return ctx
	}
	return trace.ContextWithSpanContext(ctx, parent)
}

// traced adds the trace id of ctx's span to log, so every line of a run
// can be found from its trace and the other way round.
func traced(ctx context.Context, log *slog.Logger) *slog.Logger {
	if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
		return log.With("trace_id", sc.TraceID().String())
	}
	return log
}

// endSpan records err on span, if any, and ends it.
func endSpan(span trace.Span, err error) {
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
	}
	span.End()
}

// chatAttrs describe the chat a span is about.
func chatAttrs(platform, externalID string) trace.SpanStartOption {
	return trace.WithAttributes(attribute.String("messaging.system", platform),
		attribute.String("messaging.message.id", externalID))
}
