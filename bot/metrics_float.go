package bot

import "github.com/VictoriaMetrics/metrics"

// FloatCounterVec is a family of counters of fractional amounts (dollars)
// told apart by label values.
type FloatCounterVec struct {
	set    *metrics.Set
	name   string
	labels []string
}

// NewFloatCounterVec returns the float counter family name with labels in
// set; a feature package makes its metrics with it.
func NewFloatCounterVec(set *metrics.Set, name string, labels ...string) *FloatCounterVec {
	return &FloatCounterVec{set: set, name: name, labels: labels}
}

// WithLabelValues returns the counter for these label values (in the
// order of the family's labels).
func (c *FloatCounterVec) WithLabelValues(values ...string) *metrics.FloatCounter {
	return c.set.GetOrCreateFloatCounter(series(c.name, c.labels, values))
}
