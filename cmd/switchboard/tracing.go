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
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, then the official OTLP
// exporter (traceexport.go) configured by the standard OTEL_* variables:
// protocol, headers, timeout, TLS; the sampler by OTEL_TRACES_SAMPLER, the
// batching by OTEL_BSP_*, the service's name and attributes by
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
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
func newTracing(ctx context.Context, replica string, log *slog.Logger) (*tracing, error) {
	if !tracingOn(os.Getenv) {
		return &tracing{}, nil
	}
	settings, err := traceExportFrom(os.Getenv)
	if err != nil {
		return nil, fmt.Errorf("%w:\ntracing: %w", errConfig, err)
	}
	exp, err := settings.exporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w:\ntracing: %w", errConfig, err)
	}
	res, err := traceResource(ctx, replica)
	if err != nil {
		return nil, fmt.Errorf("%w:\ntracing: %w", errConfig, err)
	}
	log.Info("tracing on: spans go to the OTLP collector", "endpoint", settings.shown, "protocol", settings.protocol)
	logged := &loggedExporter{SpanExporter: exp, endpoint: settings.shown, log: log}
	return &tracing{provider: newTraceProvider(logged, res)}, nil
}

// traceResource names the service whose spans these are: switchboard, its
// version and this replica, unless OTEL_SERVICE_NAME or
// OTEL_RESOURCE_ATTRIBUTES say otherwise.
func traceResource(ctx context.Context, replica string) (*resource.Resource, error) {
	res, err := resource.New(ctx, resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithAttributes(semconv.ServiceName("switchboard"), semconv.ServiceVersion(version), semconv.ServiceInstanceID(replica)),
		resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	return res, nil
}

// newTraceProvider is the SDK provider exporting to exp in batches, its
// spans naming res.
func newTraceProvider(exp sdktrace.SpanExporter, res *resource.Resource) *sdktrace.TracerProvider {
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
