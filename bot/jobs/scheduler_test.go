package jobs_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// replica is one scheduler with its own pool, agent and dispatcher.
type replica struct {
	sched  *jobs.Scheduler
	cancel context.CancelFunc
	done   chan struct{}
}

func startReplica(t *testing.T, dbURL, owner, llmURL string, ch *recorder) *replica {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	db, err := postgres.Open(ctx, dbURL, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	agent := &agentcore.Agent{Name: "default", Model: "m", History: db, Tools: tools.NewRegistry(tools.RegistryOptions{}),
		Provider: agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: llmURL, Model: "m"})}
	chans := map[string]channels.Channel{"test": ch}
	live := bot.NewLiveness(bot.LivenessOptions{Store: db, Owner: owner}) // one heartbeat, as in the daemon
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: chans, Owner: owner, Liveness: live,
		Poll: 50 * time.Millisecond, Lease: 5 * time.Second})
	s := jobs.NewScheduler(jobs.SchedulerOptions{Jobs: db, History: db, Agents: oneAgent{agent}, Owner: owner, Liveness: live,
		Tick: 200 * time.Millisecond, Lease: 2 * time.Second, Grace: 20 * time.Second, RetryBase: 200 * time.Millisecond,
		Nudge: disp.Nudge})
	r := &replica{sched: s, cancel: cancel, done: make(chan struct{})}
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); live.Run(ctx) }()
	go func() { defer wg.Done(); s.Run(ctx) }()
	go func() { defer wg.Done(); disp.Run(ctx) }()
	go func() { wg.Wait(); db.Close(); close(r.done) }()
	t.Cleanup(func() { r.cancel(); <-r.done })
	return r
}

// replicasDB returns a new migrated database for replicas to share and a
// connection to it for the test's own reads and writes (closed at the end).
func replicasDB(t *testing.T) (string, *postgres.DB) {
	t.Helper()
	dbURL := pgtest.New(t)
	admin, err := postgres.Open(context.Background(), dbURL, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(admin.Close)
	if err := postgres.Migrate(context.Background(), admin); err != nil {
		t.Fatal(err)
	}
	return dbURL, admin
}

// TestSchedulerExactlyOnceAcrossReplicas runs a job every second on three
// replicas, kills one while it runs a slot, and checks every slot ran and
// was delivered exactly once.
func TestSchedulerExactlyOnceAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	dbURL, admin := replicasDB(t)
	llm := llmtest.NewServer()
	defer llm.Close()
	llm.Handle(func(req llmtest.Request) llmtest.Reply {
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				last = m.Content
			}
		}
		slot, _, _ := strings.Cut(last, "\n")
		return llmtest.Reply{Text: "report " + slot, Delay: 400 * time.Millisecond}
	})
	ch := newRecorder()
	job, err := admin.UpsertJob(ctx, jobs.Job{Name: "tick", Schedule: "@every 1s", Prompt: "status please",
		Target: channels.Address{Platform: "test", ChatID: "room"}, Enabled: true, Overlap: jobs.OverlapQueue})
	if err != nil {
		t.Fatal(err)
	}
	var reps []*replica
	for _, name := range []string{"a", "b", "c"} {
		reps = append(reps, startReplica(t, dbURL, name, llm.URL(), ch))
	}
	// Kill the replica running a slot about 3 s in, mid-run.
	time.Sleep(3 * time.Second)
	victim := ""
	deadline := time.Now().Add(5 * time.Second)
	for victim == "" && time.Now().Before(deadline) {
		runs, err := admin.RecentRuns(ctx, job.ID, 1)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 && runs[0].Status == jobs.RunRunning {
			victim = runs[0].LeaseOwner
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if victim == "" {
		t.Fatal("no run in progress to interrupt")
	}
	killedAt := time.Now()
	reps[victim[0]-'a'].cancel()
	time.Sleep(6 * time.Second)
	if err := admin.SetJobEnabled(ctx, "tick", false); err != nil {
		t.Fatal(err)
	}
	// Let the open runs finish and deliver.
	var runs []jobs.JobRun
	for end := time.Now().Add(15 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if runs, err = admin.RecentRuns(ctx, job.ID, 1000); err != nil {
			t.Fatal(err)
		}
		open := 0
		for _, r := range runs {
			if r.Status == jobs.RunRunning || r.Status == jobs.RunPending {
				open++
			}
		}
		if open == 0 && ch.Count("room") >= len(runs) {
			break
		}
	}
	if len(runs) < 7 {
		t.Fatalf("only %d slots ran in ~9 s", len(runs))
	}
	slots := map[string]bool{}
	reclaimed := false
	for _, r := range runs {
		if r.Status != jobs.RunSucceeded {
			t.Errorf("slot %s: status %s (%s)", r.ScheduledAt.UTC(), r.Status, r.Error)
		}
		if r.Attempts > 1 && r.StartedAt.Before(killedAt) {
			reclaimed = true
		}
		slots["report [scheduled job \"tick\", slot "+r.ScheduledAt.UTC().Format(time.RFC3339)+"]"] = true
	}
	t.Logf("%d slots, replica %s killed", len(runs), victim)
	if !reclaimed {
		t.Errorf("no slot was taken over from the killed replica %s", victim)
	}
	// Consecutive slots: none missing between the first and last.
	for i := 1; i < len(runs); i++ {
		if gap := runs[i-1].ScheduledAt.Sub(runs[i].ScheduledAt); gap != time.Second {
			t.Errorf("gap of %s before slot %s", gap, runs[i-1].ScheduledAt.UTC())
		}
	}
	sent := ch.Sent()
	delivered := map[string]int{}
	for _, m := range sent {
		delivered[m.Text]++
	}
	for text := range slots {
		if delivered[text] != 1 {
			t.Errorf("%s delivered %d times, want 1", text, delivered[text])
		}
	}
	if len(sent) != len(slots) {
		t.Errorf("%d messages sent for %d slots", len(sent), len(slots))
	}
}
