package bot_test

import (
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// TestOneTracePerMessage: with tracing on, each message is one trace:
// inbound → run → each model call and tool call → the reply's send, with
// the PostgreSQL queries and Redis commands of those steps in the same
// trace, and no message text in any span.
func TestOneTracePerMessage(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	p := startPipeline(t, pipelineOptions{Tracing: tp})

	withTool := msg("trace-1", "u1", "what time is it? CALL_TOOL:datetime")
	plain := msg("trace-2", "u2", "a secret-ish sentence nobody should trace")
	if err := p.router.Handle(t.Context(), withTool); err != nil {
		t.Fatal(err)
	}
	if err := p.router.Handle(t.Context(), plain); err != nil {
		t.Fatal(err)
	}
	p.ch.WaitFor(t, "trace-1", 1)
	p.ch.WaitFor(t, "trace-2", 1)

	// The send spans end just after Send returns, and the run's span after
	// the run hands its reply over: wait until both have ended.
	byTrace := func() map[trace.TraceID][]tracetest.SpanStub {
		out := map[trace.TraceID][]tracetest.SpanStub{}
		for _, s := range exp.GetSpans() {
			out[s.SpanContext.TraceID()] = append(out[s.SpanContext.TraceID()], s)
		}
		return out
	}
	traceOf := func(ext string) (trace.TraceID, []tracetest.SpanStub) {
		for id, spans := range byTrace() {
			for _, s := range spans {
				if s.Name == "switchboard.inbound" && hasAttr(s.Attributes, "messaging.message.id", ext) {
					return id, spans
				}
			}
		}
		return trace.TraceID{}, nil
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, a := traceOf(withTool.ExternalID)
		_, b := traceOf(plain.ExternalID)
		done := func(spans []tracetest.SpanStub) bool {
			return count(spans, "switchboard.outbox.send") == 1 && count(spans, "switchboard.run") == 1
		}
		if done(a) && done(b) {
			break
		}
		if time.Now().After(deadline) {
			for id, spans := range byTrace() {
				t.Logf("trace %s: %v", id, names(spans))
			}
			t.Fatalf("no complete traces")
		}
		time.Sleep(10 * time.Millisecond)
	}

	idA, a := traceOf(withTool.ExternalID)
	idB, b := traceOf(plain.ExternalID)
	if idA == idB {
		t.Fatal("two messages share a trace")
	}
	want := map[string]int{"switchboard.inbound": 1, "switchboard.run": 1, "llm.chat": 2, "tool.call": 1, "switchboard.outbox.send": 1}
	for name, n := range want {
		if got := count(a, name); got != n {
			t.Errorf("tool message: %d %q spans, want %d (all: %v)", got, name, n, names(a))
		}
	}
	for name, n := range map[string]int{"switchboard.inbound": 1, "switchboard.run": 1, "llm.chat": 1, "tool.call": 0, "switchboard.outbox.send": 1} {
		if got := count(b, name); got != n {
			t.Errorf("plain message: %d %q spans, want %d (all: %v)", got, name, n, names(b))
		}
	}
	for _, spans := range [][]tracetest.SpanStub{a, b} {
		if !hasSystem(spans, "postgresql") {
			t.Errorf("no PostgreSQL span in the trace: %v", names(spans))
		}
		if !hasSystem(spans, "redis") {
			t.Errorf("no Redis span in the trace: %v", names(spans))
		}
		// The chain: run under inbound, model calls and the send under run.
		inbound, run := find(spans, "switchboard.inbound"), find(spans, "switchboard.run")
		if run.Parent.SpanID() != inbound.SpanContext.SpanID() {
			t.Error("the run is not a child of the inbound span")
		}
		for _, s := range spans {
			if (s.Name == "llm.chat" || s.Name == "switchboard.outbox.send") && s.Parent.SpanID() != run.SpanContext.SpanID() {
				t.Errorf("%s is not a child of the run", s.Name)
			}
			for _, kv := range s.Attributes {
				if strings.Contains(kv.Value.Emit(), "secret-ish") {
					t.Errorf("span %s records the message text in %s", s.Name, kv.Key)
				}
			}
		}
	}
}

func count(spans []tracetest.SpanStub, name string) int {
	n := 0
	for _, s := range spans {
		if s.Name == name {
			n++
		}
	}
	return n
}

func find(spans []tracetest.SpanStub, name string) tracetest.SpanStub {
	for _, s := range spans {
		if s.Name == name {
			return s
		}
	}
	return tracetest.SpanStub{}
}

func names(spans []tracetest.SpanStub) []string {
	out := make([]string, 0, len(spans))
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

func hasAttr(attrs []attribute.KeyValue, key, value string) bool {
	for _, kv := range attrs {
		if string(kv.Key) == key && kv.Value.Emit() == value {
			return true
		}
	}
	return false
}

func hasSystem(spans []tracetest.SpanStub, system string) bool {
	for _, s := range spans {
		if hasAttr(s.Attributes, "db.system", system) || hasAttr(s.Attributes, "db.system.name", system) {
			return true
		}
	}
	return false
}
