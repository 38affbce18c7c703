package main

import (
	"log/slog"
	"strings"
	"testing"
	"time"
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

func TestOTLPJSONSettings(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	e, err := newOTLPJSON(envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":       "https://collector.example:4318/",
		"OTEL_EXPORTER_OTLP_HEADERS":        "authorization=Bearer%20abc, x-team = ops ,broken",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS": "x-team=chat",
		"OTEL_EXPORTER_OTLP_TIMEOUT":        "2500",
	}), log)
	if err != nil {
		t.Fatal(err)
	}
	if e.url != "https://collector.example:4318/v1/traces" {
		t.Errorf("url %q", e.url)
	}
	if e.headers["authorization"] != "Bearer abc" || e.headers["x-team"] != "chat" || len(e.headers) != 2 {
		t.Errorf("headers %v", e.headers)
	}
	if e.client.Timeout != 2500*time.Millisecond {
		t.Errorf("timeout %v", e.client.Timeout)
	}
	e, err = newOTLPJSON(envOf(map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:9999/custom"}), log)
	if err != nil || e.url != "http://c:9999/custom" {
		t.Errorf("traces endpoint taken as is: %v %v", e, err)
	}
	for _, bad := range []string{"collector:4318", "ftp://c/x", "http://"} {
		if _, err := newOTLPJSON(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": bad}), log); err == nil || !strings.Contains(err.Error(), "http://") {
			t.Errorf("endpoint %q: %v, want an error naming the expected form", bad, err)
		}
	}
}

func TestTracingRefusesGRPC(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if _, err := newTracing("r1", slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), "4318") {
		t.Fatalf("newTracing with grpc: %v, want a refusal that points at OTLP/HTTP on 4318", err)
	}
}
