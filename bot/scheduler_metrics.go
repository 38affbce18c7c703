package bot

import "github.com/prometheus/client_golang/prometheus"

// SchedulerMetrics are the cron scheduler's Prometheus metrics.
type SchedulerMetrics struct {
	// Runs counts finished run attempts and slots, by status (succeeded,
	// failed, retry, skipped).
	Runs *prometheus.CounterVec
	// Lag is the delay between a slot's time and the start of its run.
	Lag prometheus.Histogram
}

// NewSchedulerMetrics creates the metrics and registers them with reg (nil:
// not registered).
func NewSchedulerMetrics(reg prometheus.Registerer) *SchedulerMetrics {
	m := &SchedulerMetrics{
		Runs: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchboard_job_runs_total", Help: "Cron job run attempts and slots, by status.",
		}, []string{"status"}),
		Lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "switchboard_job_start_lag_seconds", Help: "Delay between a job slot's time and its run's start.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}),
	}
	if reg != nil {
		reg.MustRegister(m.Runs, m.Lag)
	}
	return m
}
