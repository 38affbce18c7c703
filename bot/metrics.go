package bot

import (
	"strings"
	"time"

	"github.com/VictoriaMetrics/metrics"
)

// Metrics are the daemon's metrics, served in the Prometheus text format
// at /metrics. (VictoriaMetrics/metrics rather than the Prometheus
// client: the same format without protobuf, whose reflection keeps the
// linker from dropping unused methods — a much larger binary.)
type Metrics struct {
	// MessagesIn counts inbound chat events accepted, by platform and kind.
	MessagesIn *CounterVec
	// MessagesOut counts outbound messages delivered, by platform.
	MessagesOut *CounterVec
	// Duplicates counts inbound events dropped as redeliveries.
	Duplicates *metrics.Counter
	// RateLimited counts inbound messages refused by a rate limit, by scope.
	RateLimited *CounterVec
	// AgentRun is the duration of agent runs, by outcome.
	AgentRun *HistogramVec
	// LLMLatency is the duration of LLM provider calls, by outcome.
	LLMLatency *HistogramVec
	// ToolCalls counts tool calls, by tool and outcome.
	ToolCalls *CounterVec
	// OutboxErrors counts failed delivery attempts, by platform and kind
	// (retry, failed).
	OutboxErrors *CounterVec
}

// runBuckets are the upper bounds of the run and LLM latency histograms:
// 5 ms × 2.5ⁿ, up to about 20 minutes.
var runBuckets = ExponentialBuckets(0.005, 2.5, 12)

// NewMetrics creates the metrics in set (nil: a set of their own, for
// tests).
func NewMetrics(set *metrics.Set) *Metrics {
	if set == nil {
		set = metrics.NewSet()
	}
	return &Metrics{
		MessagesIn:   &CounterVec{set: set, name: "switchboard_messages_in_total", labels: []string{"platform", "kind"}},
		MessagesOut:  &CounterVec{set: set, name: "switchboard_messages_out_total", labels: []string{"platform"}},
		Duplicates:   set.NewCounter("switchboard_inbound_duplicates_total"),
		RateLimited:  &CounterVec{set: set, name: "switchboard_rate_limited_total", labels: []string{"scope"}},
		AgentRun:     &HistogramVec{set: set, name: "switchboard_agent_run_seconds", labels: []string{"outcome"}, buckets: runBuckets},
		LLMLatency:   &HistogramVec{set: set, name: "switchboard_llm_request_seconds", labels: []string{"outcome"}, buckets: runBuckets},
		ToolCalls:    &CounterVec{set: set, name: "switchboard_tool_calls_total", labels: []string{"tool", "outcome"}},
		OutboxErrors: &CounterVec{set: set, name: "switchboard_outbox_errors_total", labels: []string{"platform", "kind"}},
	}
}

// ObserveLLM records one LLM call; it fits agentcore.Agent.ObserveLLM.
func (m *Metrics) ObserveLLM(took time.Duration, err error) {
	m.LLMLatency.WithLabelValues(outcome(err)).Observe(took.Seconds())
}

// ObserveTool records one tool call; it fits tools.RegistryOptions.Observe.
func (m *Metrics) ObserveTool(tool string, _ time.Duration, isError bool) {
	o := "ok"
	if isError {
		o = "error"
	}
	m.ToolCalls.WithLabelValues(tool, o).Inc()
}

func outcome(err error) string {
	if err != nil {
		return "error"
	}
	return "ok"
}

// CounterVec is a family of counters told apart by label values.
type CounterVec struct {
	set    *metrics.Set
	name   string
	labels []string
}

// NewCounterVec returns the counter family name with labels in set; a
// feature package makes its metrics with it.
func NewCounterVec(set *metrics.Set, name string, labels ...string) *CounterVec {
	return &CounterVec{set: set, name: name, labels: labels}
}

// WithLabelValues returns the counter for these label values (in the
// order of the family's labels).
func (c *CounterVec) WithLabelValues(values ...string) *metrics.Counter {
	return c.set.GetOrCreateCounter(series(c.name, c.labels, values))
}

// HistogramVec is a family of histograms told apart by label values.
type HistogramVec struct {
	set     *metrics.Set
	name    string
	labels  []string
	buckets []float64
}

// WithLabelValues returns the histogram for these label values.
func (h *HistogramVec) WithLabelValues(values ...string) Observer {
	return Observer{h.set.GetOrCreatePrometheusHistogramExt(series(h.name, h.labels, values), h.buckets)}
}

// Observer records observations in one histogram.
type Observer struct{ h *metrics.PrometheusHistogram }

// NewObserver returns the histogram name with upper bounds buckets in set.
func NewObserver(set *metrics.Set, name string, buckets []float64) Observer {
	return Observer{set.NewPrometheusHistogramExt(name, buckets)}
}

// Observe records v.
func (o Observer) Observe(v float64) { o.h.Update(v) }

// series renders name{label="value",…} with the values escaped as the
// Prometheus text format wants.
func series(name string, labels, values []string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, l := range labels {
		if i > 0 {
			b.WriteByte(',')
		}
		v := ""
		if i < len(values) {
			v = values[i]
		}
		b.WriteString(l + `="` + labelEscaper.Replace(v) + `"`)
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// ExponentialBuckets returns n upper bounds: start, start×factor, …
func ExponentialBuckets(start, factor float64, n int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = start
		start *= factor
	}
	return out
}
