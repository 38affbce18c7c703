package jobs

import (
	"github.com/VictoriaMetrics/metrics"

	"github.com/switchboard-chat/switchboard/bot"
)

// SchedulerMetrics are the cron scheduler's metrics.
type SchedulerMetrics struct {
	// Runs counts finished run attempts and slots, by status (succeeded,
	// failed, retry, skipped).
	Runs *bot.CounterVec
	// Lag is the delay between a slot's time and the start of its run.
	Lag bot.Observer
}

// NewSchedulerMetrics creates the metrics in set (nil: a set of their
// own).
func NewSchedulerMetrics(set *metrics.Set) *SchedulerMetrics {
	if set == nil {
		set = metrics.NewSet()
	}
	return &SchedulerMetrics{
		Runs: bot.NewCounterVec(set, "switchboard_job_runs_total", "status"),
		Lag:  bot.NewObserver(set, "switchboard_job_start_lag_seconds", bot.ExponentialBuckets(0.05, 2, 14)),
	}
}
