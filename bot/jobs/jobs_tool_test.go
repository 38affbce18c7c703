package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

func TestJobsCronStoreCreateAndList(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s := jobs.NewCronStore(db)

	before := time.Now()
	created, err := s.CreateJob(ctx, tools.CronJob{Name: " Daily ", Schedule: "0 9 * * *", Timezone: "Europe/Berlin",
		Prompt: "summarise alerts", Target: "telegram:42:7", Agent: "ops"}, "telegram:1001")
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	if created.Name != "daily" || created.Source != jobs.JobFromTool || created.Next.Before(before) {
		t.Errorf("created %+v", created)
	}
	stored, err := db.GetJob(ctx, "daily")
	if err != nil {
		t.Fatal(err)
	}
	want := channels.Address{Platform: "telegram", ChatID: "42", ThreadID: "7"}
	if stored.Source != jobs.JobFromTool || stored.CreatedBy != "telegram:1001" || stored.Target != want ||
		!stored.Enabled || stored.Agent != "ops" || stored.Overlap != jobs.OverlapSkip {
		t.Errorf("stored %+v", stored)
	}

	jobs, err := s.ListJobs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(jobs) != 1 || jobs[0].Name != "daily" || jobs[0].Target != "telegram:42:7" {
		t.Fatalf("list = %+v", jobs)
	}
	next := jobs[0].Next
	if next.IsZero() || !next.After(before) {
		t.Fatalf("next run %v, want one after %v", next, before)
	}
	if h, m := next.Hour(), next.Minute(); h != 9 || m != 0 || next.Location().String() != "Europe/Berlin" {
		t.Errorf("next run %v, want 09:00 Europe/Berlin", next)
	}
}

func TestJobsCronStoreRejectsInvalidJobs(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s := jobs.NewCronStore(db)
	for name, j := range map[string]tools.CronJob{
		"TZ=0":           {Name: "a", Schedule: "TZ=0", Prompt: "p", Target: "telegram:42"},
		"three fields":   {Name: "a", Schedule: "* * *", Prompt: "p", Target: "telegram:42"},
		"bad zone":       {Name: "a", Schedule: "@daily", Timezone: "Mars/Olympus", Prompt: "p", Target: "telegram:42"},
		"bad name":       {Name: "no spaces", Schedule: "@daily", Prompt: "p", Target: "telegram:42"},
		"bad target":     {Name: "a", Schedule: "@daily", Prompt: "p", Target: "telegram"},
		"blank prompt":   {Name: "a", Schedule: "@daily", Prompt: " \n ", Target: "telegram:42"},
		"empty schedule": {Name: "a", Schedule: "", Prompt: "p", Target: "telegram:42"},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := s.ValidateJob(ctx, j); err == nil {
				t.Error("ValidateJob accepted it")
			}
			if _, err := s.CreateJob(ctx, j, "telegram:1"); err == nil {
				t.Error("CreateJob accepted it")
			}
		})
	}
	_, err := s.CreateJob(ctx, tools.CronJob{Name: "a", Schedule: "TZ=0", Prompt: "p", Target: "telegram:42"}, "")
	if err == nil || !strings.Contains(err.Error(), "unknown time zone") {
		t.Errorf("TZ=0: %v", err)
	}
	if jobs, _ := db.ListJobs(ctx); len(jobs) != 0 {
		t.Errorf("invalid jobs were stored: %+v", jobs)
	}
}

func TestJobsCronStoreLeavesOtherSourcesAlone(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	s := jobs.NewCronStore(db)
	for _, j := range []jobs.Job{
		{Name: "report", Schedule: "@daily", Prompt: "config prompt", Target: channels.Address{Platform: "telegram", ChatID: "1"},
			Enabled: true, CreatedBy: "config", Source: jobs.JobFromConfig},
		{Name: "standup", Schedule: "@daily", Prompt: "chat prompt", Target: channels.Address{Platform: "telegram", ChatID: "1"},
			Enabled: true, CreatedBy: "telegram:5", Source: jobs.JobFromChat},
	} {
		if _, err := db.UpsertJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	for name, where := range map[string]string{"report": "config file", "standup": "/jobs"} {
		j := tools.CronJob{Name: name, Schedule: "@hourly", Prompt: "hijacked", Target: "telegram:666"}
		if _, err := s.ValidateJob(ctx, j); err == nil || !strings.Contains(err.Error(), where) {
			t.Errorf("validate %s: %v, want it to mention %q", name, err, where)
		}
		if _, err := s.CreateJob(ctx, j, "telegram:9"); err == nil || !strings.Contains(err.Error(), "pick another name") {
			t.Errorf("create %s: %v", name, err)
		}
		if err := s.DeleteJob(ctx, name); err == nil || !strings.Contains(err.Error(), "may not delete") {
			t.Errorf("delete %s: %v", name, err)
		}
		got, err := db.GetJob(ctx, name)
		if err != nil {
			t.Fatalf("%s is gone: %v", name, err)
		}
		if got.Prompt == "hijacked" || got.Target.ChatID != "1" || got.Source == jobs.JobFromTool {
			t.Errorf("%s was changed: %+v", name, got)
		}
	}

	// The tool's own jobs can be replaced and deleted.
	mine := tools.CronJob{Name: "mine", Schedule: "@daily", Prompt: "v1", Target: "slack:C1"}
	if _, err := s.CreateJob(ctx, mine, "slack:U1"); err != nil {
		t.Fatal(err)
	}
	mine.Prompt = "v2"
	if _, err := s.CreateJob(ctx, mine, "slack:U1"); err != nil {
		t.Fatalf("replace own job: %v", err)
	}
	if got, _ := db.GetJob(ctx, "mine"); got.Prompt != "v2" {
		t.Errorf("prompt %q after replace", got.Prompt)
	}
	if err := s.DeleteJob(ctx, "mine"); err != nil {
		t.Fatalf("delete own job: %v", err)
	}
	if _, err := db.GetJob(ctx, "mine"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("after delete: %v", err)
	}
	if err := s.DeleteJob(ctx, "mine"); err == nil || !strings.Contains(err.Error(), "no job named") {
		t.Errorf("delete missing: %v", err)
	}
}

// TestCronToolOnPostgres runs the cron tool on the adapter: the approval
// text shows the normalized job and the job lands in Postgres.
func TestCronToolOnPostgres(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	ap := &fixedApprover{decision: tools.AllowedOnce}
	c := tools.NewCron(tools.CronOptions{Store: jobs.NewCronStore(db), Approver: ap, Logger: slog.New(slog.DiscardHandler)})
	call := tools.Call{Channel: "telegram", ChatID: "42", UserID: "telegram:1001", Agent: "default", Session: "s", ToolCallID: "c1"}
	args, _ := json.Marshal(map[string]string{"action": "create", "name": "Morning", "schedule": "30 8 * * 1-5",
		"timezone": "Europe/Berlin", "prompt": "good morning"})
	res := c.Execute(tools.WithCall(ctx, call), args)
	if res.IsError {
		t.Fatalf("create: %s", res.ForLLM)
	}
	want := `create job "morning" at "30 8 * * 1-5" (Europe/Berlin) posting to telegram:42: good morning`
	if len(ap.requests) != 1 || ap.requests[0].Command != want {
		t.Errorf("requests = %+v, want %q", ap.requests, want)
	}
	if j, err := db.GetJob(ctx, "morning"); err != nil || j.Source != jobs.JobFromTool {
		t.Errorf("stored %+v, %v", j, err)
	}
	args, _ = json.Marshal(map[string]string{"action": "create", "name": "bad", "schedule": "TZ=0", "prompt": "p"})
	if res := c.Execute(tools.WithCall(ctx, call), args); !res.IsError || !strings.Contains(res.ForLLM, "unknown time zone") {
		t.Errorf("TZ=0 through the tool: %+v", res)
	}
	if len(ap.requests) != 1 {
		t.Error("an invalid job reached the approvers")
	}
}

// fixedApprover answers every request with decision and records it.
type fixedApprover struct {
	decision tools.Decision
	requests []tools.ApprovalRequest
}

func (*fixedApprover) AlwaysAllowed(context.Context, string, string) (bool, error) { return false, nil }

func (a *fixedApprover) Approve(_ context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	a.requests = append(a.requests, req)
	return a.decision, nil
}
