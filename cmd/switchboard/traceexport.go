package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// traceExport is where and how spans are exported, read from the standard
// OTEL_EXPORTER_OTLP_* variables. The official exporters read the rest of
// them themselves (certificates, compression, the http/json encoding);
// these few are read here because the exporters, given a malformed
// endpoint, fall back to localhost without a word, and because
// OTEL_EXPORTER_OTLP_TRACES_HEADERS adds to OTEL_EXPORTER_OTLP_HEADERS
// here (a tenant header beside a shared token) where the exporters would
// replace one map with the other.
type traceExport struct {
	protocol string // grpc, http/protobuf or http/json
	url      string // the collector's URL; for OTLP/HTTP with its path (/v1/traces)
	shown    string // url without a password, for the log
	headers  map[string]string
	timeout  time.Duration
}

// traceProtocols are the values OTEL_EXPORTER_OTLP_PROTOCOL may take.
var traceProtocols = []string{"http/protobuf", "http/json", "grpc"}

// traceExportFrom reads the export settings: the protocol from
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL
// (http/protobuf by default); the URL from
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or
// OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces over HTTP); *_HEADERS (k=v,k2=v2,
// values URL-encoded) and *_TIMEOUT (milliseconds, default 10 000).
func traceExportFrom(getenv func(string) string) (*traceExport, error) {
	e := &traceExport{protocol: "http/protobuf", headers: map[string]string{}, timeout: 10 * time.Second}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if p := strings.TrimSpace(getenv(name)); p != "" {
			e.protocol = p
		}
	}
	if !slices.Contains(traceProtocols, e.protocol) {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL must be one of %s (got %q)", strings.Join(traceProtocols, ", "), e.protocol)
	}
	target := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if target == "" {
		base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		if base == "" {
			return nil, fmt.Errorf("no OTEL_EXPORTER_OTLP_ENDPOINT")
		}
		target = base
		if e.protocol != "grpc" {
			target = strings.TrimRight(base, "/") + "/v1/traces"
		}
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL such as http://collector:4318 (http://collector:4317 for grpc; got %q)", target)
	}
	e.url, e.shown = u.String(), u.Redacted()
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, kv := range strings.Split(getenv(name), ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				continue
			}
			if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
				v = dv
			}
			e.headers[strings.TrimSpace(k)] = v
		}
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"} {
		if ms, err := strconv.Atoi(getenv(name)); err == nil && ms > 0 {
			e.timeout = time.Duration(ms) * time.Millisecond
		}
	}
	return e, nil
}

// exporter is the official OTLP exporter for e's protocol: otlptracegrpc for
// grpc, otlptracehttp otherwise. Neither connects here: the gRPC client
// connects on its first export, so a collector that is down delays no start.
func (e *traceExport) exporter(ctx context.Context) (sdktrace.SpanExporter, error) {
	if e.protocol == "grpc" {
		exp, err := otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(e.url),
			otlptracegrpc.WithHeaders(e.headers), otlptracegrpc.WithTimeout(e.timeout))
		if err != nil {
			return nil, fmt.Errorf("otlp/grpc exporter: %w", err)
		}
		return exp, nil
	}
	opts := []otlptracehttp.Option{otlptracehttp.WithEndpointURL(e.url),
		otlptracehttp.WithHeaders(e.headers), otlptracehttp.WithTimeout(e.timeout)}
	if e.protocol == "http/json" {
		opts = append(opts, otlptracehttp.WithEncoding(otlptracehttp.EncodingJSON))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("otlp/http exporter: %w", err)
	}
	return exp, nil
}

// loggedExporter logs the first failed export of a streak and the first
// success after it, so an unreachable collector is said once, not per batch.
type loggedExporter struct {
	sdktrace.SpanExporter
	endpoint string // without credentials: it is logged
	log      *slog.Logger

	mu      sync.Mutex
	failing bool // a failure was logged; the next success says so
}

// ExportSpans implements sdktrace.SpanExporter.
func (e *loggedExporter) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	err := e.SpanExporter.ExportSpans(ctx, spans)
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err != nil && !e.failing:
		e.failing = true
		e.log.Warn("traces not exported; spans are dropped until the collector answers (check OTEL_EXPORTER_OTLP_ENDPOINT)",
			"endpoint", e.endpoint, "spans", len(spans), "err", err)
	case err == nil && e.failing:
		e.failing = false
		e.log.Info("traces exported again", "endpoint", e.endpoint)
	}
	return err
}
