package jobs

import (
	"context"
	"time"
)

// AdminList returns the lister of GET /api/v1/jobs (admin.Options.Jobs):
// every job of store by name, as docs/admin-api.md shows it.
func AdminList(store Store) func(ctx context.Context) (any, error) {
	return func(ctx context.Context) (any, error) {
		list, err := store.ListJobs(ctx)
		if err != nil {
			return nil, err
		}
		out := make([]map[string]any, 0, len(list))
		for _, j := range list {
			out = append(out, map[string]any{"name": j.Name, "schedule": j.Schedule, "agent": j.Agent, "enabled": j.Enabled,
				"timezone": j.Timezone, "post_to": j.Target.String(), "prompt": j.Prompt, "source": j.Source})
		}
		return out, nil
	}
}

// Overview is a job as the admin console shows it: when it runs next and
// its newest runs.
type Overview struct {
	Job Job
	// Next is the next slot; zero when paused, finished or invalid, and
	// NextNote says which.
	Next     time.Time
	NextNote string
	Runs     []JobRun
	// Usage is what those runs used (nil without a UsageFunc or runs).
	Usage *RunsUsage
}

// Overviews lists every job with its next run and its newest runs (at most
// runs of them), and with usage what they used.
func Overviews(ctx context.Context, store Store, usage UsageFunc, runs int) ([]Overview, error) {
	list, err := store.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]Overview, 0, len(list))
	for _, j := range list {
		o := Overview{Job: j, NextNote: "paused"}
		if j.Enabled {
			o.NextNote = "no next run"
			if s, err := ParseSchedule(j.Schedule, j.Timezone); err != nil {
				o.NextNote = "invalid schedule: " + err.Error()
			} else if o.Next = s.Next(now); !o.Next.IsZero() {
				o.NextNote = ""
			}
		}
		if o.Runs, err = store.RecentRuns(ctx, j.ID, runs); err != nil {
			return nil, err
		}
		var since time.Time
		for _, r := range o.Runs {
			if !r.StartedAt.IsZero() && (since.IsZero() || r.StartedAt.Before(since)) {
				since = r.StartedAt
			}
		}
		if usage != nil && !since.IsZero() {
			if u, err := usage(ctx, j.Name, since); err == nil {
				o.Usage = &u
			}
		}
		out = append(out, o)
	}
	return out, nil
}
