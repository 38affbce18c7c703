package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/config"
)

// configJobs turns the config's jobs into validated jobs; every problem
// is reported, one per line.
func configJobs(cfg *config.Config) ([]jobs.Job, error) {
	var list []jobs.Job
	var problems []string
	seen := map[string]bool{}
	for i, cj := range cfg.Jobs {
		target, err := channels.ParseAddress(cj.Target)
		if err != nil {
			problems = append(problems, fmt.Sprintf("jobs[%d] (%s): target: %v", i, cj.Name, err))
			continue
		}
		j := jobs.Job{
			Name: cj.Name, Schedule: cj.Schedule, Timezone: cj.Timezone, Agent: cj.Agent, Prompt: cj.Prompt,
			Target: target, Enabled: cj.IsEnabled(), Overlap: cj.Overlap, CatchUp: cj.CatchUp,
			CreatedBy: "config", Source: jobs.JobFromConfig,
		}
		if err := jobs.ValidateJob(&j); err != nil {
			problems = append(problems, fmt.Sprintf("jobs[%d]: %v", i, err))
			continue
		}
		if seen[j.Name] {
			problems = append(problems, fmt.Sprintf("jobs[%d]: the name %s is used twice", i, j.Name))
			continue
		}
		seen[j.Name] = true
		list = append(list, j)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return list, nil
}

// syncJobs makes the stored config-defined jobs match the config: the file
// is their source. Jobs made in chat or by the agent are left alone.
func (d *daemon) syncJobs(ctx context.Context) error {
	want, err := configJobs(d.cfg)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, j := range want {
		if _, err := d.st.db.UpsertJob(ctx, j); err != nil {
			return fmt.Errorf("save job %s: %w", j.Name, err)
		}
		keep[j.Name] = true
	}
	stored, err := d.st.db.ListJobs(ctx)
	if err != nil {
		return fmt.Errorf("list jobs: %w", err)
	}
	for _, j := range stored {
		if j.Source == jobs.JobFromConfig && !keep[j.Name] {
			if err := d.st.db.DeleteJob(ctx, j.Name); err != nil && !errors.Is(err, bot.ErrNotFound) {
				return fmt.Errorf("remove job %s: %w", j.Name, err)
			}
			d.log.Info("job removed from config", "job", j.Name)
		}
	}
	return nil
}

// wireJobs builds the jobs scheduler, which runs each job on the router's
// agents, and registers the jobs feature's chat commands (/jobs) with the
// router. Their store wakes the scheduler when a job is added, paused or
// resumed, so a change made in chat runs on time.
func (d *daemon) wireJobs(owner string) error {
	d.sched = jobs.NewScheduler(jobs.SchedulerOptions{
		Jobs: d.st.db, History: d.st.db, Outbox: d.st.db, Agents: d.router,
		Owner: owner, Liveness: d.live, Nudge: d.disp.Nudge, Scrub: d.scrubber.Scrub,
		Metrics: jobs.NewSchedulerMetrics(d.metricSet), Logger: d.log.With("component", "scheduler"),
	})
	if err := d.router.Register(jobs.Commands(jobs.CommandOptions{Store: d.sched.WatchJobs(d.st.db), Usage: d.jobUsage, Logger: d.log})...); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	return nil
}
