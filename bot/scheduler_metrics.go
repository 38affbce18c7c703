package bot

import "github.com/VictoriaMetrics/metrics"

// SchedulerMetrics are the cron scheduler's metrics.
type SchedulerMetrics struct {
	// Runs counts finished run attempts and slots, by status (succeeded,
	// failed, retry, skipped).
	Runs *CounterVec
	// Lag is the delay between a slot's time and the start of its run.
	Lag Observer
}

// NewSchedulerMetrics creates the metrics in set (nil: a set of their
// own).
func NewSchedulerMetrics(set *metrics.Set) *SchedulerMetrics {
	if set == nil {
		set = metrics.NewSet()
	}
	return &SchedulerMetrics{
		Runs: &CounterVec{set: set, name: "switchboard_job_runs_total", labels: []string{"status"}},
		Lag:  Observer{set.NewPrometheusHistogramExt("switchboard_job_start_lag_seconds", exponential(0.05, 2, 14))},
	}
}
