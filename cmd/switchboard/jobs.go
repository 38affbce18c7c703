package main

import (
	"context"
	"errors"
	"fmt"
	"strings"

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
// is their source. Jobs removed from it are retired (their run history
// kept); jobs made in chat or by the agent are left alone.
func (d *daemon) syncJobs(ctx context.Context) error {
	want, err := configJobs(d.cfg)
	if err != nil {
		return err
	}
	res, err := d.st.db.SyncConfigJobs(ctx, want)
	if err != nil {
		return err
	}
	for _, name := range res.Saved {
		d.log.Info("job saved from config", "job", name)
	}
	for _, name := range res.Retired {
		d.log.Info("job removed from config; retired", "job", name)
	}
	return nil
}

// wireJobs builds the jobs scheduler, which runs each job on the router's
// agents, and registers the jobs feature's chat commands (/jobs) with the
// router. Their store wakes the scheduler when a job is added, paused or
// resumed, so a change made in chat runs on time.
func (d *daemon) wireJobs(owner string) error {
	d.sched = jobs.NewScheduler(jobs.SchedulerOptions{
		Jobs: d.st.db, History: d.st.db, Agents: d.router,
		Owner: owner, Liveness: d.live, Nudge: d.disp.Nudge, Scrub: d.scrubber.Scrub,
		Metrics: jobs.NewSchedulerMetrics(d.metricSet), Logger: d.log.With("component", "scheduler"),
	})
	if err := d.router.Register(jobs.Commands(jobs.CommandOptions{Store: d.sched.WatchJobs(d.st.db), Usage: d.jobUsage,
		RunNow: d.sched.RunNow, Logger: d.log})...); err != nil {
		return fmt.Errorf("jobs: %w", err)
	}
	return nil
}
