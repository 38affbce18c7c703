package jobs

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// runsStore lists one job with the given runs.
type runsStore struct {
	Store
	runs []JobRun
}

func (s runsStore) ListJobs(context.Context) ([]Job, error) {
	return []Job{{ID: 7, Name: "daily", Schedule: "0 9 * * *", Target: channels.Address{Platform: "telegram", ChatID: "-5"}}}, nil
}
func (s runsStore) RecentRuns(_ context.Context, id int64, limit int) ([]JobRun, error) {
	if id != 7 || limit != lastRunsShown {
		return nil, errors.New("unexpected query")
	}
	return s.runs, nil
}

// TestJobsListUsage: /jobs shows each job's last runs' tokens and cost
// from the usage records since the oldest of them began; without usage,
// the runs' own token counts; skipped slots and jobs never run show none.
func TestJobsListUsage(t *testing.T) {
	ctx, log := context.Background(), slog.New(slog.DiscardHandler)
	t0 := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	store := runsStore{runs: []JobRun{
		{StartedAt: t0.Add(48 * time.Hour), TokensIn: 100, TokensOut: 20},
		{Status: RunSkipped},
		{StartedAt: t0, TokensIn: 10, TokensOut: 2},
	}}
	var asked time.Time
	price := 0.0123
	usage := func(_ context.Context, job string, since time.Time) (RunsUsage, error) {
		if job != "daily" {
			return RunsUsage{}, errors.New("wrong job")
		}
		asked = since
		return RunsUsage{Tokens: 5000, CostDollars: &price}, nil
	}
	in := inbound()
	if got := jobsCommand(ctx, CommandOptions{Store: store, Usage: usage, Logger: log}, true, in, ""); !strings.Contains(got, "; last 2 runs: 5000 tokens, $0.0123") {
		t.Errorf("/jobs = %q", got)
	}
	if !asked.Equal(t0) {
		t.Errorf("usage asked since %v, want the oldest run's start %v", asked, t0)
	}
	if got := jobsCommand(ctx, CommandOptions{Store: store, Logger: log}, true, in, ""); !strings.Contains(got, "; last 2 runs: 132 tokens\n") {
		t.Errorf("/jobs without usage = %q", got)
	}
	unpriced := func(context.Context, string, time.Time) (RunsUsage, error) { return RunsUsage{Tokens: 9}, nil }
	if got := jobsCommand(ctx, CommandOptions{Store: store, Usage: unpriced, Logger: log}, true, in, ""); !strings.Contains(got, "9 tokens, cost unknown") {
		t.Errorf("/jobs unpriced = %q", got)
	}
	never := runsStore{runs: []JobRun{{Status: RunSkipped}}}
	if got := jobsCommand(ctx, CommandOptions{Store: never, Usage: usage, Logger: log}, true, in, ""); strings.Contains(got, "last") {
		t.Errorf("/jobs of a job never run = %q", got)
	}
}
