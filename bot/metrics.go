package bot

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics are the daemon's Prometheus metrics.
type Metrics struct {
	MessagesIn   *prometheus.CounterVec
	MessagesOut  *prometheus.CounterVec
	Duplicates   prometheus.Counter
	RateLimited  *prometheus.CounterVec
	AgentRun     *prometheus.HistogramVec
	LLMLatency   *prometheus.HistogramVec
	ToolCalls    *prometheus.CounterVec
	OutboxErrors *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (nil: not
// registered, useful in tests).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		MessagesIn: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_messages_in_total", Help: "Inbound chat events accepted, by platform and kind.",
		}, []string{"platform", "kind"}),
		MessagesOut: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_messages_out_total", Help: "Outbound messages delivered, by platform.",
		}, []string{"platform"}),
		Duplicates: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "switchboard_inbound_duplicates_total", Help: "Inbound events dropped as redeliveries.",
		}),
		RateLimited: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_rate_limited_total", Help: "Inbound messages refused by a rate limit, by scope.",
		}, []string{"scope"}),
		AgentRun: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_agent_run_seconds", Help: "Duration of agent runs, by outcome.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, []string{"outcome"}),
		LLMLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchboard_llm_request_seconds", Help: "Duration of LLM provider calls, by outcome.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2.5, 12),
		}, []string{"outcome"}),
		ToolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_tool_calls_total", Help: "Tool calls, by tool and outcome.",
		}, []string{"tool", "outcome"}),
		OutboxErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_outbox_errors_total", Help: "Failed delivery attempts, by platform and kind (retry, failed).",
		}, []string{"platform", "kind"}),
	}
	if reg != nil {
		reg.MustRegister(m.MessagesIn, m.MessagesOut, m.Duplicates, m.RateLimited,
			m.AgentRun, m.LLMLatency, m.ToolCalls, m.OutboxErrors)
	}
	return m
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
