package bot_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
)

// TestMetricsEndpoint: /metrics serves the Prometheus text format with
// labelled counters and le-bucketed histograms, label values escaped.
func TestMetricsEndpoint(t *testing.T) {
	set := metrics.NewSet()
	m := bot.NewMetrics(set)
	m.MessagesIn.WithLabelValues("telegram", "message").Inc()
	m.MessagesIn.WithLabelValues("telegram", "message").Inc()
	m.ToolCalls.WithLabelValues(`odd"tool\name`, "ok").Inc()
	m.ObserveLLM(30*time.Millisecond, nil)
	jobs.NewSchedulerMetrics(set).Runs.WithLabelValues("succeeded").Inc()
	ts := httptest.NewServer(bot.NewHTTPHandler(bot.HTTPOptions{Metrics: set.WritePrometheus}))
	defer ts.Close()
	resp, err := http.Get(ts.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	body := string(b)
	for _, want := range []string{
		`switchboard_messages_in_total{platform="telegram",kind="message"} 2`,
		`switchboard_tool_calls_total{tool="odd\"tool\\name",outcome="ok"} 1`,
		`switchboard_llm_request_seconds_bucket{outcome="ok",le="0.03125"} 1`,
		`switchboard_llm_request_seconds_count{outcome="ok"} 1`,
		`switchboard_job_runs_total{status="succeeded"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s:\n%s", want, body)
		}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type = %q", ct)
	}
}
