package jobs

import "context"

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
