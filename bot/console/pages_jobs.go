package console

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// ErrJobBusy is returned by Jobs.RunNow while a run of the job goes.
var ErrJobBusy = errors.New("the job is running right now")

// Jobs lists and changes the scheduled jobs (the jobs feature, wired by
// cmd/switchboard).
type Jobs interface {
	// List returns every job with its next run and newest runs.
	List(ctx context.Context) ([]Job, error)
	// SetEnabled pauses or resumes job name; bot.ErrNotFound if none.
	SetEnabled(ctx context.Context, name string, enabled bool) error
	// RunNow queues an extra run at once; bot.ErrNotFound if none,
	// ErrJobBusy while one goes.
	RunNow(ctx context.Context, name string) error
}

// Job is a scheduled job as the Jobs page shows it.
type Job struct {
	Name, Schedule, Timezone, Agent, Prompt, PostTo, Source string
	Enabled                                                 bool
	// Next is the next run; zero with NextNote saying why.
	Next     time.Time
	NextNote string
	Runs     []JobRun
	// Tokens and Cost are what Runs used; Cost nil when unknown.
	Tokens int64
	Cost   *float64
}

// JobRun is one run of a job.
type JobRun struct {
	ScheduledAt, StartedAt, FinishedAt time.Time
	Status                             string
	Attempts                           int
	Tokens                             int
	Error                              string
}

// Duration is how long the run took, "" while it has not finished.
func (r JobRun) Duration() string {
	if r.StartedAt.IsZero() || r.FinishedAt.IsZero() {
		return ""
	}
	return r.FinishedAt.Sub(r.StartedAt).Round(100 * time.Millisecond).String()
}

// jobsData is what the Jobs page shows.
type jobsData struct {
	Off  bool
	List []Job
	CSRF string
}

// jobDone says what a change did, by the code its redirect carries.
var jobDone = map[string]string{
	"paused":   "Paused: it runs no more until resumed.",
	"resumed":  "Resumed: it runs at its next time.",
	"queued":   "Queued: it runs in a moment; reload to see the run.",
	"busy":     "It is running right now; try again when the run is done.",
	"notfound": "There is no such job (deleted meanwhile?).",
	"bad":      "Choose pause, resume or run now.",
	"failed":   "Could not change the job (storage unavailable); try again in a moment.",
}

func (c *Console) jobsPage(w http.ResponseWriter, r *http.Request) {
	s := current(r)
	p := page{Title: "Jobs", Nav: "jobs", Session: s, Notice: jobDone[r.URL.Query().Get("done")]}
	d := jobsData{Off: c.o.Jobs == nil, CSRF: s.CSRF}
	if !d.Off {
		var err error
		if d.List, err = c.o.Jobs.List(r.Context()); err != nil {
			c.log.Error("console: list jobs", "err", err)
			p.Error = "Could not list the jobs (storage unavailable); reload in a moment."
		}
	}
	p.Data = d
	c.render(w, r, http.StatusOK, "jobs", p)
}

// jobAction pauses, resumes or runs a job now.
func (c *Console) jobAction(w http.ResponseWriter, r *http.Request) {
	done := func(code string) {
		http.Redirect(w, r, "/admin/jobs?done="+url.QueryEscape(code), http.StatusSeeOther)
	}
	if c.o.Jobs == nil {
		done("bad")
		return
	}
	name, action := r.PathValue("name"), r.PostFormValue("action")
	ctx, cancel := durable(r.Context())
	defer cancel()
	var err error
	code := map[string]string{"pause": "paused", "resume": "resumed", "run": "queued"}[action]
	switch action {
	case "pause", "resume":
		err = c.o.Jobs.SetEnabled(ctx, name, action == "resume")
	case "run":
		err = c.o.Jobs.RunNow(ctx, name)
	default:
		done("bad")
		return
	}
	switch {
	case errors.Is(err, bot.ErrNotFound):
		done("notfound")
	case errors.Is(err, ErrJobBusy):
		done("busy")
	case err != nil:
		c.log.Error("console: change job", "job", name, "action", action, "err", err)
		done("failed")
	default:
		c.log.Info("console job change", "job", name, "action", action, "by", current(r).Identity)
		done(code)
	}
}
