package main

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// collector is a fake OTLP collector: it keeps the spans posted to
// /v1/traces (protobuf, or JSON with OTEL_EXPORTER_OTLP_PROTOCOL=http/json)
// or sent to its gRPC trace service (grpcCollector).
type collector struct {
	mu       sync.Mutex
	spans    []otlpSpan
	headers  []http.Header
	services []string // each resource's service.name
}

// otlpSpan is what the tests read of an exported span.
type otlpSpan struct {
	TraceID    string
	Name       string
	Attributes []otlpKeyValue
}

type otlpKeyValue struct {
	Key   string
	Value struct{ String *string }
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	unmarshal := map[string]func([]byte, proto.Message) error{
		"application/x-protobuf": proto.Unmarshal,
		"application/json":       protojson.Unmarshal,
	}[r.Header.Get("Content-Type")]
	if r.URL.Path != "/v1/traces" || unmarshal == nil {
		http.Error(w, "want OTLP at /v1/traces", http.StatusNotFound)
		return
	}
	body, err := io.ReadAll(r.Body)
	var req coltracepb.ExportTraceServiceRequest
	if err == nil {
		err = unmarshal(body, &req)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.keep(&req, r.Header.Clone())
	w.Header().Set("Content-Type", r.Header.Get("Content-Type"))
	w.WriteHeader(http.StatusOK)
}

// keep adds the spans of req, sent with headers.
func (c *collector) keep(req *coltracepb.ExportTraceServiceRequest, headers http.Header) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.headers = append(c.headers, headers)
	for _, rs := range req.GetResourceSpans() {
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				c.services = append(c.services, kv.GetValue().GetStringValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				c.spans = append(c.spans, spanOf(s))
			}
		}
	}
}

func spanOf(s *tracepb.Span) otlpSpan {
	out := otlpSpan{TraceID: hex.EncodeToString(s.GetTraceId()), Name: s.GetName()}
	for _, kv := range s.GetAttributes() {
		a := otlpKeyValue{Key: kv.GetKey()}
		if v, ok := kv.GetValue().GetValue().(*commonpb.AnyValue_StringValue); ok {
			a.Value.String = &v.StringValue
		}
		out.Attributes = append(out.Attributes, a)
	}
	return out
}

// grpcCollector is the collector's OTLP/gRPC trace service.
type grpcCollector struct {
	coltracepb.UnimplementedTraceServiceServer
	c *collector
}

// Export implements coltracepb.TraceServiceServer.
func (g grpcCollector) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	headers := http.Header{}
	for k, v := range md {
		headers[http.CanonicalHeaderKey(k)] = v
	}
	g.c.keep(req, headers)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

// startCollector serves c over OTLP/HTTP, or OTLP/gRPC when grpc, until the
// test ends, and returns its OTEL_EXPORTER_OTLP_ENDPOINT.
func startCollector(t *testing.T, c *collector, overGRPC bool) string {
	t.Helper()
	if !overGRPC {
		srv := httptest.NewServer(c)
		t.Cleanup(srv.Close)
		return srv.URL
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, grpcCollector{c: c})
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	return "http://" + lis.Addr().String()
}

// trace returns the spans of the trace whose root is the inbound span of
// the message with external id ext.
func (c *collector) trace(ext string) []otlpSpan {
	c.mu.Lock()
	defer c.mu.Unlock()
	var id string
	for _, s := range c.spans {
		if s.Name == "switchboard.inbound" && spanAttr(s, "messaging.message.id") == ext {
			id = s.TraceID
		}
	}
	var out []otlpSpan
	for _, s := range c.spans {
		if id != "" && s.TraceID == id {
			out = append(out, s)
		}
	}
	return out
}

func spanAttr(s otlpSpan, key string) string {
	for _, kv := range s.Attributes {
		if kv.Key == key && kv.Value.String != nil {
			return *kv.Value.String
		}
	}
	return ""
}

// TestE2ETracesOneMessage runs the daemon with OTEL_EXPORTER_OTLP_ENDPOINT
// pointing at a fake collector: a Telegram message becomes one trace with
// the inbound, run, model call and send spans and the PostgreSQL and Redis
// spans beneath them, and the run's log lines carry its trace id.
func TestE2ETracesOneMessage(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	col := &collector{}
	srv := httptest.NewServer(col)
	defer srv.Close()
	e := startTelegramE2E(ctx, t, func(env map[string]string) {
		env["OTEL_EXPORTER_OTLP_ENDPOINT"] = srv.URL
		env["OTEL_EXPORTER_OTLP_HEADERS"] = "x-tenant=chat%20ops"
		env["OTEL_BSP_SCHEDULE_DELAY"] = "50"
	})
	update := e.tg.SendText(4242, 4242, "Ann", "what time is it? CALL_TOOL:datetime")
	if _, err := waitAnswers(ctx, e.tg, 4242, 1); err != nil {
		t.Fatal(err)
	}
	ext := strconv.FormatInt(update, 10)
	var spans []otlpSpan
	for {
		spans = col.trace(ext)
		names := map[string]int{}
		for _, s := range spans {
			names[s.Name]++
		}
		if names["switchboard.outbox.send"] > 0 && names["switchboard.run"] > 0 && names["llm.chat"] == 2 && names["tool.call"] == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no complete trace for update %s; got %v", ext, names)
		case <-time.After(50 * time.Millisecond):
		}
	}
	var pg, rd bool
	for _, s := range spans {
		pg = pg || spanAttr(s, "db.system") == "postgresql" || spanAttr(s, "db.system.name") == "postgresql"
		rd = rd || spanAttr(s, "db.system") == "redis" || spanAttr(s, "db.system.name") == "redis"
	}
	if !pg || !rd {
		t.Errorf("trace lacks storage spans (postgres %v, redis %v)", pg, rd)
	}
	col.mu.Lock()
	if h := col.headers[0].Get("X-Tenant"); h != "chat ops" {
		t.Errorf("OTEL_EXPORTER_OTLP_HEADERS not sent: %q", h)
	}
	col.mu.Unlock()
	// Every log line about the session's run names the trace. Recovery's
	// passes run outside any message's trace: one that finds the session
	// mid-run and leaves it to the run says so in a line of its own.
	id, lines := spans[0].TraceID, 0
	for line := range strings.Lines(e.d.out.String()) {
		if !strings.Contains(line, "session=default/telegram:4242") || strings.Contains(line, "recovery found") {
			continue
		}
		lines++
		if !strings.Contains(line, "trace_id="+id) {
			t.Errorf("a log line of the run lacks trace_id=%s: %s", id, line)
		}
	}
	if lines == 0 {
		t.Errorf("no log line of the run:\n%s", e.d.out.String())
	}
}
