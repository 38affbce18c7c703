package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"
)

// tracing is the daemon's OpenTelemetry setup: off (nil provider) unless
// the standard OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, then OTLP over HTTP in JSON
// (otlpjson.go), configured by the standard OTEL_* variables (headers,
// timeout; the sampler by OTEL_TRACES_SAMPLER).
type tracing struct {
	provider *sdktrace.TracerProvider // nil when off
}

// tracingOn reports whether the environment asks for traces.
func tracingOn(getenv func(string) string) bool {
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") || getenv("OTEL_TRACES_EXPORTER") == "none" {
		return false
	}
	return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// newTracing starts the exporter when the environment asks for traces.
// Spans are batched and exported in the background; nothing waits for the
// collector.
func newTracing(replica string, log *slog.Logger) (*tracing, error) {
	if !tracingOn(os.Getenv) {
		return &tracing{}, nil
	}
	proto := os.Getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = os.Getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto == "grpc" {
		return nil, fmt.Errorf("%w:\nOTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported; switchboard exports traces with OTLP over HTTP (http/json), to the collector's port 4318", errConfig)
	}
	exp, err := newOTLPJSON(os.Getenv, log)
	if err != nil {
		return nil, fmt.Errorf("%w:\ntracing: %v", errConfig, err)
	}
	log.Info("tracing on: spans go to the OTLP collector", "endpoint", exp.url)
	return &tracing{provider: newTraceProvider(exp, replica)}, nil
}

// newTraceProvider is the SDK provider exporting to exp in batches, its spans
// naming this service and replica.
func newTraceProvider(exp sdktrace.SpanExporter, replica string) *sdktrace.TracerProvider {
	res := resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName("switchboard"), semconv.ServiceVersion(version), semconv.ServiceInstanceID(replica))
	return sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
}

// tracerProvider returns the provider for the stores' instrumentation, nil
// when tracing is off (then no query or command pays for it).
func (t *tracing) tracerProvider() trace.TracerProvider {
	if t == nil || t.provider == nil {
		return nil
	}
	return t.provider
}

// tracer returns switchboard's tracer, nil when tracing is off.
func (t *tracing) tracer() trace.Tracer {
	if t == nil || t.provider == nil {
		return nil
	}
	return t.provider.Tracer("github.com/switchboard-chat/switchboard")
}

// shutdown flushes the spans still batched.
func (t *tracing) shutdown(ctx context.Context) {
	if t != nil && t.provider != nil {
		_ = t.provider.Shutdown(ctx)
	}
}
