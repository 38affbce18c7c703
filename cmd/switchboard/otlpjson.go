package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// otlpJSON exports spans with OTLP over HTTP in its JSON encoding
// (POST <endpoint>/v1/traces, application/json), which every OTLP/HTTP
// receiver accepts beside protobuf. It is written here instead of using
// otlptracehttp because that exporter links gRPC and its dependencies
// (about 20 MB, 40 % of the binary) even for HTTP; JSON needs nothing
// beyond the standard library.
type otlpJSON struct {
	url     string
	headers map[string]string
	client  *http.Client
	log     *slog.Logger

	mu      sync.Mutex
	failing bool // a failure was logged; the next success says so
}

// newOTLPJSON configures the exporter from the standard variables:
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or
// OTEL_EXPORTER_OTLP_ENDPOINT (+ /v1/traces), *_HEADERS (k=v,k2=v2, values
// URL-encoded) and *_TIMEOUT (milliseconds, default 10 000).
func newOTLPJSON(getenv func(string) string, log *slog.Logger) (*otlpJSON, error) {
	target := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
	if target == "" {
		base := getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
		if base == "" {
			return nil, fmt.Errorf("no OTEL_EXPORTER_OTLP_ENDPOINT")
		}
		target = strings.TrimRight(base, "/") + "/v1/traces"
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL such as http://collector:4318 (got %q)", target)
	}
	headers := map[string]string{}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		for _, kv := range strings.Split(getenv(name), ",") {
			k, v, ok := strings.Cut(kv, "=")
			if !ok || strings.TrimSpace(k) == "" {
				continue
			}
			if dv, err := url.QueryUnescape(strings.TrimSpace(v)); err == nil {
				v = dv
			}
			headers[strings.TrimSpace(k)] = v
		}
	}
	timeout := 10 * time.Second
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"} {
		if ms, err := strconv.Atoi(getenv(name)); err == nil && ms > 0 {
			timeout = time.Duration(ms) * time.Millisecond
		}
	}
	return &otlpJSON{url: u.String(), headers: headers, client: &http.Client{Timeout: timeout}, log: log}, nil
}

// ExportSpans implements sdktrace.SpanExporter: one request per batch.
func (e *otlpJSON) ExportSpans(ctx context.Context, spans []sdktrace.ReadOnlySpan) error {
	if len(spans) == 0 {
		return nil
	}
	body, err := json.Marshal(encodeSpans(spans))
	if err != nil {
		return fmt.Errorf("otlp: encode: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("otlp: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range e.headers {
		req.Header.Set(k, v)
	}
	resp, err := e.client.Do(req)
	if err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		if resp.StatusCode/100 != 2 {
			err = fmt.Errorf("collector answered HTTP %d", resp.StatusCode)
		}
	}
	e.outcome(err, len(spans))
	return err
}

// outcome logs the first failure of a streak and the recovery.
func (e *otlpJSON) outcome(err error, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err != nil && !e.failing:
		e.failing = true
		e.log.Warn("traces not exported; spans are dropped until the collector answers (check OTEL_EXPORTER_OTLP_ENDPOINT)",
			"endpoint", e.url, "spans", n, "err", err)
	case err == nil && e.failing:
		e.failing = false
		e.log.Info("traces exported again", "endpoint", e.url)
	}
}

// Shutdown implements sdktrace.SpanExporter.
func (e *otlpJSON) Shutdown(context.Context) error {
	e.client.CloseIdleConnections()
	return nil
}

// The OTLP JSON shapes (opentelemetry-proto's JSON mapping: ids in hex,
// 64-bit integers as strings, enums as numbers).
type (
	otlpRequest struct {
		ResourceSpans []otlpResourceSpans `json:"resourceSpans"`
	}
	otlpResourceSpans struct {
		Resource   otlpResource     `json:"resource"`
		ScopeSpans []otlpScopeSpans `json:"scopeSpans"`
	}
	otlpResource struct {
		Attributes []otlpKeyValue `json:"attributes"`
	}
	otlpScopeSpans struct {
		Scope otlpScope  `json:"scope"`
		Spans []otlpSpan `json:"spans"`
	}
	otlpScope struct {
		Name    string `json:"name"`
		Version string `json:"version,omitempty"`
	}
	otlpSpan struct {
		TraceID      string         `json:"traceId"`
		SpanID       string         `json:"spanId"`
		ParentSpanID string         `json:"parentSpanId,omitempty"`
		Name         string         `json:"name"`
		Kind         int            `json:"kind"`
		Start        string         `json:"startTimeUnixNano"`
		End          string         `json:"endTimeUnixNano"`
		Attributes   []otlpKeyValue `json:"attributes,omitempty"`
		Events       []otlpEvent    `json:"events,omitempty"`
		Status       otlpStatus     `json:"status"`
	}
	otlpEvent struct {
		Time       string         `json:"timeUnixNano"`
		Name       string         `json:"name"`
		Attributes []otlpKeyValue `json:"attributes,omitempty"`
	}
	otlpStatus struct {
		Code    int    `json:"code,omitempty"` // 0 unset, 1 ok, 2 error
		Message string `json:"message,omitempty"`
	}
	otlpKeyValue struct {
		Key   string    `json:"key"`
		Value otlpValue `json:"value"`
	}
	otlpValue struct {
		String *string  `json:"stringValue,omitempty"`
		Bool   *bool    `json:"boolValue,omitempty"`
		Int    *string  `json:"intValue,omitempty"`
		Double *float64 `json:"doubleValue,omitempty"`
	}
)

// encodeSpans groups spans by resource and scope, as OTLP wants them.
func encodeSpans(spans []sdktrace.ReadOnlySpan) otlpRequest {
	var req otlpRequest
	resources := map[string]int{}
	scopes := map[[2]string]int{}
	for _, s := range spans {
		rkey := s.Resource().Encoded(attribute.DefaultEncoder())
		ri, ok := resources[rkey]
		if !ok {
			ri = len(req.ResourceSpans)
			resources[rkey] = ri
			req.ResourceSpans = append(req.ResourceSpans, otlpResourceSpans{Resource: otlpResource{Attributes: encodeAttrs(s.Resource().Attributes())}})
		}
		scope := s.InstrumentationScope()
		skey := [2]string{rkey, scope.Name + "\x00" + scope.Version}
		si, ok := scopes[skey]
		rs := &req.ResourceSpans[ri]
		if !ok {
			si = len(rs.ScopeSpans)
			scopes[skey] = si
			rs.ScopeSpans = append(rs.ScopeSpans, otlpScopeSpans{Scope: otlpScope{Name: scope.Name, Version: scope.Version}})
		}
		rs.ScopeSpans[si].Spans = append(rs.ScopeSpans[si].Spans, encodeSpan(s))
	}
	return req
}

func encodeSpan(s sdktrace.ReadOnlySpan) otlpSpan {
	sc := s.SpanContext()
	out := otlpSpan{
		TraceID: sc.TraceID().String(), SpanID: sc.SpanID().String(),
		Name: s.Name(), Kind: int(s.SpanKind()),
		Start: strconv.FormatInt(s.StartTime().UnixNano(), 10), End: strconv.FormatInt(s.EndTime().UnixNano(), 10),
		Attributes: encodeAttrs(s.Attributes()),
	}
	if p := s.Parent(); p.SpanID().IsValid() {
		out.ParentSpanID = p.SpanID().String()
	}
	switch st := s.Status(); st.Code {
	case codes.Error:
		out.Status = otlpStatus{Code: 2, Message: st.Description}
	case codes.Ok:
		out.Status = otlpStatus{Code: 1}
	}
	for _, ev := range s.Events() {
		out.Events = append(out.Events, otlpEvent{Time: strconv.FormatInt(ev.Time.UnixNano(), 10), Name: ev.Name, Attributes: encodeAttrs(ev.Attributes)})
	}
	return out
}

func encodeAttrs(attrs []attribute.KeyValue) []otlpKeyValue {
	out := make([]otlpKeyValue, 0, len(attrs))
	for _, kv := range attrs {
		var v otlpValue
		switch kv.Value.Type() {
		case attribute.BOOL:
			b := kv.Value.AsBool()
			v.Bool = &b
		case attribute.INT64:
			i := strconv.FormatInt(kv.Value.AsInt64(), 10)
			v.Int = &i
		case attribute.FLOAT64:
			f := kv.Value.AsFloat64()
			v.Double = &f
		default: // strings, and slices as their text
			str := kv.Value.Emit()
			v.String = &str
		}
		out = append(out, otlpKeyValue{Key: string(kv.Key), Value: v})
	}
	return out
}
