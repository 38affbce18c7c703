package main

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestTracingOnlyWhenAsked(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{map[string]string{}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		if got := tracingOn(envOf(c.env)); got != c.want {
			t.Errorf("tracingOn(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

func TestTraceExportSettings(t *testing.T) {
	e, err := traceExportFrom(envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":       "https://collector.example:4318/",
		"OTEL_EXPORTER_OTLP_HEADERS":        "authorization=Bearer%20abc, x-team = ops ,broken",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=chat",
		"OTEL_EXPORTER_OTLP_TIMEOUT":        "2500",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if e.url != "https://collector.example:4318/v1/traces" {
		t.Errorf("url %q", e.url)
	}
	if e.headers["authorization"] != "Bearer abc" || e.headers["x-team"] != "chat" || len(e.headers) != 2 {
		t.Errorf("headers %v", e.headers)
	}
	if e.timeout != 2500*time.Millisecond {
		t.Errorf("timeout %v", e.timeout)
	}
	e, err = traceExportFrom(envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:9999/custom"}))
	if err != nil || e.url != "http://c:9999/custom" {
		t.Errorf("traces endpoint taken as is: %v %v", e, err)
	}
	for _, bad := range []string{"collector:4318", "ftp://c/x", "http://"} {
		if _, err := traceExportFrom(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": bad})); err == nil || !strings.Contains(err.Error(), "http://") {
			t.Errorf("endpoint %q: %v, want an error naming the expected form", bad, err)
		}
	}
}

// Over gRPC the endpoint is the collector's address, with no path added;
// the protocol for traces wins over the general one, and one the exporters
// do not speak is refused at start.
func TestTraceExportProtocol(t *testing.T) {
	e, err := traceExportFrom(envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://collector:4317",
		"OTEL_EXPORTER_OTLP_PROTOCOL":        "http/json",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc",
	}))
	if err != nil || e.protocol != "grpc" || e.url != "http://collector:4317" {
		t.Errorf("grpc settings %+v, %v", e, err)
	}
	e, err = traceExportFrom(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://user:secret@collector:4318"}))
	if err != nil || e.protocol != "http/protobuf" || strings.Contains(e.shown, "secret") {
		t.Errorf("default settings %+v, %v: want http/protobuf and no password shown", e, err)
	}
	_, err = traceExportFrom(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4318", "OTEL_EXPORTER_OTLP_PROTOCOL": "thrift"}))
	if err == nil || !strings.Contains(err.Error(), "http/protobuf") {
		t.Errorf("protocol thrift: %v, want a refusal naming the protocols", err)
	}
}

// exportOne starts tracing from the environment the test set, ends one
// span of message ext and flushes it.
func exportOne(t *testing.T, ext string) {
	t.Helper()
	ctx := testCtx(t, 30*time.Second)
	tr, err := newTracing(ctx, "r1", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_, span := tr.tracer().Start(ctx, "switchboard.inbound", trace.WithAttributes(attribute.String("messaging.message.id", ext)))
	span.End()
	tr.shutdown(ctx)
}

// wantContentType is each OTLP/HTTP protocol's request body.
var wantContentType = map[string]string{
	"":              "application/x-protobuf",
	"http/protobuf": "application/x-protobuf",
	"http/json":     "application/json",
}

// Each protocol reaches the collector with the span, the configured
// headers and the service name OTEL_SERVICE_NAME gives.
func TestTracingExportsEachProtocol(t *testing.T) {
	for _, protocol := range []string{"", "http/protobuf", "http/json", "grpc"} {
		name := strings.ReplaceAll(protocol, "/", "-")
		if name == "" {
			name = "default"
		}
		t.Run(name, func(t *testing.T) {
			col := &collector{}
			endpoint := startCollector(t, col, protocol == "grpc")
			t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
			t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", protocol)
			t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=chat%20ops")
			t.Setenv("OTEL_SERVICE_NAME", "switchboard-test")
			exportOne(t, "42")
			if spans := col.trace("42"); len(spans) != 1 {
				t.Fatalf("collector got %d spans of the message, want 1", len(spans))
			}
			col.mu.Lock()
			defer col.mu.Unlock()
			if h := col.headers[0].Get("X-Tenant"); h != "chat ops" {
				t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not sent: %q", h)
			}
			if want := wantContentType[protocol]; want != "" && col.headers[0].Get("Content-Type") != want {
				t.Errorf("sent as %q, want %q", col.headers[0].Get("Content-Type"), want)
			}
			if col.services[0] != "switchboard-test" {
				t.Errorf("service.name %q, want OTEL_SERVICE_NAME's", col.services[0])
			}
		})
	}
}

// A collector that fails is logged once, not per batch, and its recovery
// once too.
func TestTracingLogsFailuresOnce(t *testing.T) {
	var logs channeltest.Log
	exp := &loggedExporter{SpanExporter: failing{}, endpoint: "http://c:4318/v1/traces", log: slog.New(slog.NewTextHandler(&logs, nil))}
	ctx := context.Background()
	for range 3 {
		_ = exp.ExportSpans(ctx, nil)
	}
	if n := strings.Count(logs.String(), "traces not exported"); n != 1 {
		t.Errorf("failure logged %d times, want once:\n%s", n, logs.String())
	}
	exp.SpanExporter = tracetest.NewNoopExporter()
	_ = exp.ExportSpans(ctx, nil)
	_ = exp.ExportSpans(ctx, nil)
	if n := strings.Count(logs.String(), "traces exported again"); n != 1 {
		t.Errorf("recovery logged %d times, want once:\n%s", n, logs.String())
	}
}

// failing is an exporter whose collector never answers.
type failing struct{ sdktrace.SpanExporter }

func (failing) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errors.New("connection refused")
}
