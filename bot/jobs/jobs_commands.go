package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// CommandOptions wire /jobs.
type CommandOptions struct {
	// Store keeps the jobs; nil answers that jobs are off. Pass the
	// Scheduler's WatchJobs(store) so a job added or resumed in chat is
	// run on time without waiting for a check.
	Store Store
	// Usage, when set, tells what each job's last runs used, cost
	// included; nil: /jobs shows the tokens the runs recorded.
	Usage UsageFunc
	// RunNow runs a job once at once (Scheduler.RunNow); nil: /jobs run
	// says the scheduler is off.
	RunNow func(ctx context.Context, name string) error
	Logger *slog.Logger
}

// UsageFunc sums the model usage of job since a time: the usage records
// of its runs and of the subagents and teammates working for them.
type UsageFunc func(ctx context.Context, job string, since time.Time) (RunsUsage, error)

// RunsUsage is what a job's runs used.
type RunsUsage struct {
	// Tokens are all the tokens, cached ones included.
	Tokens int64
	// CostDollars is nil when no call had a price.
	CostDollars *float64
}

// Commands returns the chat commands of the jobs feature, to register with
// the Router (bot.Router.Register): /jobs, for admins only.
func Commands(o CommandOptions) []bot.Command {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return []bot.Command{{
		Name: "jobs",
		Help: "scheduled jobs: /jobs, /jobs add <schedule> | <prompt>, /jobs pause|resume|delete|run <name> (admins only)",
		Run: func(ctx context.Context, host bot.Host, in channels.Inbound, args string) string {
			return jobsCommand(ctx, o, host.IsAdmin(in.Identity()), in, args)
		},
	}}
}

// jobsUsage is the /jobs help text.
const jobsUsage = "Usage: /jobs — list; /jobs add <schedule> | <prompt>; /jobs pause|resume|delete|run <name>"

// jobsCommand answers /jobs for the person in. Only admins may use it; a
// nil store means jobs are not configured. Commands registers it.
func jobsCommand(ctx context.Context, o CommandOptions, isAdmin bool, in channels.Inbound, args string) string {
	store, log := o.Store, o.Logger
	if store == nil {
		return "Scheduled jobs are not enabled on this bot."
	}
	if !isAdmin {
		return "Only admins can manage scheduled jobs."
	}
	verb, rest, _ := strings.Cut(strings.TrimSpace(args), " ")
	rest = strings.TrimSpace(rest)
	switch strings.ToLower(verb) {
	case "", "list":
		return listJobs(ctx, o)
	case "add":
		return addJob(ctx, store, log, in, rest)
	case "pause", "resume":
		if err := store.SetJobEnabled(ctx, rest, verb == "resume"); err != nil {
			return jobError(log, rest, err)
		}
		return fmt.Sprintf("Job %s %sd.", rest, verb)
	case "delete":
		if err := store.DeleteJob(ctx, rest); err != nil {
			return jobError(log, rest, err)
		}
		return fmt.Sprintf("Job %s deleted.", rest)
	case "run":
		if o.RunNow == nil {
			return "Jobs do not run on this replica (the scheduler is off); try again on another."
		}
		if err := o.RunNow(ctx, rest); err != nil {
			if errors.Is(err, ErrSlotBusy) {
				return fmt.Sprintf("Job %s is running right now; try again when it is done.", rest)
			}
			return jobError(log, rest, err)
		}
		return fmt.Sprintf("Job %s will run in a moment.", rest)
	}
	return jobsUsage
}

func listJobs(ctx context.Context, o CommandOptions) string {
	store, log := o.Store, o.Logger
	jobs, err := store.ListJobs(ctx)
	if err != nil {
		log.Error("list jobs", "err", err)
		return "Could not list jobs right now (storage unavailable). Try again in a minute."
	}
	if len(jobs) == 0 {
		return "No scheduled jobs. Add one with /jobs add <schedule> | <prompt>."
	}
	var b strings.Builder
	now := time.Now()
	for _, j := range jobs {
		next := "paused"
		if j.Enabled {
			next = "no next run"
			if s, err := ParseSchedule(j.Schedule, j.Timezone); err != nil {
				next = "invalid schedule: " + err.Error()
			} else if t := s.Next(now); !t.IsZero() {
				next = "next " + t.In(s.Location()).Format("2006-01-02 15:04:05 MST")
			}
		}
		fmt.Fprintf(&b, "- %s `%s` → %s (%s)%s\n", j.Name, j.Schedule, j.Target.String(), next, lastRuns(ctx, o, j))
	}
	return b.String()
}

// addJob handles "/jobs add <schedule> | <prompt>"; the job is named after
// the first words of the prompt and posts to the chat it was added in.
func addJob(ctx context.Context, store Store, log *slog.Logger, in channels.Inbound, rest string) string {
	spec, prompt, ok := strings.Cut(rest, "|")
	if !ok {
		return "Separate the schedule and the prompt with |, e.g. /jobs add 0 9 * * 1-5 | summarise yesterday's alerts"
	}
	j := Job{Name: jobNameFrom(prompt), Schedule: strings.TrimSpace(spec), Prompt: strings.TrimSpace(prompt),
		Target: in.Address(), Enabled: true, CreatedBy: in.Identity(), Source: JobFromChat}
	if err := ValidateJob(&j); err != nil {
		return "Not added: " + err.Error()
	}
	if _, err := store.GetJob(ctx, j.Name); err == nil {
		return fmt.Sprintf("A job named %s exists already; delete it first or change the prompt's first words.", j.Name)
	}
	if _, err := store.UpsertJob(ctx, j); err != nil {
		log.Error("add job", "job", j.Name, "err", err)
		return "Could not save the job right now (storage unavailable). Try again in a minute."
	}
	return fmt.Sprintf("Added job %s (%s), posting here.", j.Name, j.Schedule)
}

// jobNameFrom makes a job name from the first words of a prompt.
func jobNameFrom(prompt string) string {
	var b strings.Builder
	for _, w := range strings.Fields(strings.ToLower(prompt)) {
		var word strings.Builder
		for _, r := range w {
			if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
				word.WriteRune(r)
			}
		}
		if word.Len() == 0 {
			continue
		}
		if b.Len() > 0 {
			if b.Len()+1+word.Len() > 30 {
				break
			}
			b.WriteByte('-')
		}
		b.WriteString(word.String())
	}
	if b.Len() == 0 {
		return "job"
	}
	return strings.Trim(b.String()[:min(b.Len(), 30)], "-")
}

func jobError(log *slog.Logger, name string, err error) string {
	if errors.Is(err, bot.ErrNotFound) {
		return fmt.Sprintf("No job named %q. /jobs lists them.", name)
	}
	log.Error("job command", "job", name, "err", err)
	return "Could not change the job right now (storage unavailable). Try again in a minute."
}
