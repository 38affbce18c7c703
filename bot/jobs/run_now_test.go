package jobs_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
)

// RunNow (/jobs run, the console's Run now) runs a paused job once, on the
// replica asked, as one run with one attempt: not a slot left for the
// take-over pass, which counted a second attempt and waited for a check.
func TestRunNowRunsOnceWithOneAttempt(t *testing.T) {
	ctx := context.Background()
	dbURL, admin := replicasDB(t)
	llm := llmtest.NewServer()
	defer llm.Close()
	llm.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "the report"} })
	ch := newRecorder()
	job, err := admin.UpsertJob(ctx, jobs.Job{Name: "weekly", Schedule: "0 9 * * 1", Prompt: "report",
		Target: channels.Address{Platform: "test", ChatID: "room"}, Enabled: false, Overlap: jobs.OverlapQueue})
	if err != nil {
		t.Fatal(err)
	}
	r := startReplica(t, dbURL, "a", llm.URL(), ch)
	var ran error
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		// Run starts the scheduler in the background: until then it says so.
		if ran = r.sched.RunNow(ctx, "weekly"); ran == nil {
			break
		}
	}
	if ran != nil {
		t.Fatalf("RunNow = %v", ran)
	}
	if err := r.sched.RunNow(ctx, "nope"); !errors.Is(err, bot.ErrNotFound) {
		t.Errorf("RunNow of a missing job = %v, want not found", err)
	}
	ch.WaitFor(t, "room", 1)
	var runs []jobs.JobRun
	for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if runs, err = admin.RecentRuns(ctx, job.ID, 10); err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && runs[0].Status == jobs.RunSucceeded {
			break
		}
	}
	if len(runs) != 1 || runs[0].Status != jobs.RunSucceeded || runs[0].Attempts != 1 || runs[0].LeaseOwner != "a" {
		t.Fatalf("runs = %+v; want one succeeded run by a with one attempt", runs)
	}
}
