package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// collector is a fake OTLP/HTTP collector: it keeps the spans posted to
// /v1/traces (JSON encoding).
type collector struct {
	mu      sync.Mutex
	spans   []otlpSpan
	headers []http.Header
}

func (c *collector) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/v1/traces" || r.Header.Get("Content-Type") != "application/json" {
		http.Error(w, "want JSON at /v1/traces", http.StatusNotFound)
		return
	}
	var req otlpRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.headers = append(c.headers, r.Header.Clone())
	for _, rs := range req.ResourceSpans {
		for _, ss := range rs.ScopeSpans {
			c.spans = append(c.spans, ss.Spans...)
		}
	}
	w.WriteHeader(http.StatusOK)
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
	// Every log line about the session's run names the trace.
	id, lines := spans[0].TraceID, 0
	for line := range strings.Lines(e.d.out.String()) {
		if !strings.Contains(line, "session=default/telegram:4242") {
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
