package jobs

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// CronStore lets the agent's cron tool manage jobs in a Store. Jobs it
// creates have Source JobFromTool. It never touches jobs from the config
// file or from /jobs: it refuses to overwrite them, and it only deletes
// jobs the tool created (admins keep /jobs and the config for the rest).
// The ownership check and the write are two statements, so a job defined
// elsewhere in the same instant can still be replaced; config sync on start
// restores config jobs.
type CronStore struct {
	store Store
}

var (
	_ tools.CronStore     = (*CronStore)(nil)
	_ tools.CronValidator = (*CronStore)(nil)
)

// NewCronStore returns the cron tool's view of store.
func NewCronStore(store Store) *CronStore { return &CronStore{store: store} }

// ValidateJob implements tools.CronValidator: it checks j with the same
// rules as /jobs and the config file, and that the name is free or taken
// by a tool job.
func (s *CronStore) ValidateJob(ctx context.Context, j tools.CronJob) (tools.CronJob, error) {
	job, err := s.validate(ctx, j, "")
	if err != nil {
		return tools.CronJob{}, err
	}
	return cronJobOf(job, time.Now()), nil
}

// CreateJob implements tools.CronStore: it validates j, refuses to replace
// a job defined elsewhere, and saves it enabled with Source JobFromTool.
func (s *CronStore) CreateJob(ctx context.Context, j tools.CronJob, createdBy string) (tools.CronJob, error) {
	job, err := s.validate(ctx, j, createdBy)
	if err != nil {
		return tools.CronJob{}, err
	}
	stored, err := s.store.UpsertJob(ctx, job)
	if err != nil {
		return tools.CronJob{}, fmt.Errorf("could not save the job (storage unavailable); try again in a minute: %w", err)
	}
	return cronJobOf(stored, time.Now()), nil
}

// validate builds the Job for j and checks it.
func (s *CronStore) validate(ctx context.Context, j tools.CronJob, createdBy string) (Job, error) {
	target, err := channels.ParseAddress(j.Target)
	if err != nil {
		return Job{}, fmt.Errorf("target: %w", err)
	}
	job := Job{Name: j.Name, Schedule: j.Schedule, Timezone: j.Timezone, Agent: j.Agent, Prompt: j.Prompt,
		Target: target, Enabled: true, CreatedBy: createdBy, Source: JobFromTool}
	if err := ValidateJob(&job); err != nil {
		return Job{}, err
	}
	old, err := s.store.GetJob(ctx, job.Name)
	switch {
	case errors.Is(err, bot.ErrNotFound):
	case err != nil:
		return Job{}, fmt.Errorf("could not look up job %s (storage unavailable); try again in a minute: %w", job.Name, err)
	case old.Source != JobFromTool:
		return Job{}, fmt.Errorf("a job named %s exists already, %s; pick another name", job.Name, definedBy(old.Source))
	}
	return job, nil
}

// ListJobs implements tools.CronStore: all jobs by name with their next run.
func (s *CronStore) ListJobs(ctx context.Context) ([]tools.CronJob, error) {
	jobs, err := s.store.ListJobs(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	out := make([]tools.CronJob, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, cronJobOf(j, now))
	}
	return out, nil
}

// DeleteJob implements tools.CronStore. It deletes only jobs the tool
// created.
func (s *CronStore) DeleteJob(ctx context.Context, name string) error {
	old, err := s.store.GetJob(ctx, name)
	switch {
	case errors.Is(err, bot.ErrNotFound):
		return fmt.Errorf("no job named %q; list shows the jobs", name)
	case err != nil:
		return fmt.Errorf("could not look up job %s (storage unavailable); try again in a minute: %w", name, err)
	case old.Source != JobFromTool:
		return fmt.Errorf("job %s was %s, so the agent may not delete it; %s", name, definedBy(old.Source), howToDelete(old.Source))
	}
	if err := s.store.DeleteJob(ctx, name); err != nil {
		if errors.Is(err, bot.ErrNotFound) {
			return fmt.Errorf("no job named %q; list shows the jobs", name)
		}
		return fmt.Errorf("could not delete job %s (storage unavailable); try again in a minute: %w", name, err)
	}
	return nil
}

// cronJobOf converts j for the cron tool, with its next run after now.
func cronJobOf(j Job, now time.Time) tools.CronJob {
	c := tools.CronJob{Name: j.Name, Schedule: j.Schedule, Timezone: j.Timezone, Prompt: j.Prompt, Target: j.Target.String(),
		Agent: j.Agent, Source: j.Source, CreatedBy: j.CreatedBy, Enabled: j.Enabled}
	if j.Enabled {
		if sched, err := ParseSchedule(j.Schedule, j.Timezone); err == nil {
			if next := sched.Next(now); !next.IsZero() {
				c.Next = next.In(sched.Location())
			}
		}
	}
	return c
}

// definedBy says where a job of source was defined, for error messages.
func definedBy(source string) string {
	switch source {
	case JobFromConfig:
		return "defined in the config file"
	case JobFromChat:
		return "added by an admin with /jobs"
	}
	return "defined outside the cron tool"
}

// howToDelete says who can delete a job of source instead.
func howToDelete(source string) string {
	if source == JobFromConfig {
		return "an admin can remove it from the config file"
	}
	return "an admin can delete it with /jobs delete"
}
