package jobs_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/tools"
)

// slowJob stores a job due every second whose runs skip while one goes,
// and a model that takes delay to answer each run (closed at the end).
func slowJob(t *testing.T, admin *postgres.DB, delay time.Duration) (*llmtest.Server, jobs.Job) {
	t.Helper()
	llm := llmtest.NewServer()
	t.Cleanup(llm.Close)
	llm.Handle(func(llmtest.Request) llmtest.Reply { return llmtest.Reply{Text: "done", Delay: delay} })
	job, err := admin.UpsertJob(context.Background(), jobs.Job{Name: "slow", Schedule: "@every 1s", Prompt: "take your time",
		Target: channels.Address{Platform: "test", ChatID: "room"}, Enabled: true, Overlap: jobs.OverlapSkip})
	if err != nil {
		t.Fatal(err)
	}
	return llm, job
}

// firstRun waits for job's first run to be running and returns it.
func firstRun(t *testing.T, admin *postgres.DB, job jobs.Job) jobs.JobRun {
	t.Helper()
	var run jobs.JobRun
	waitUntil(t, "the first run starts", func() bool {
		runs, err := admin.RecentRuns(context.Background(), job.ID, 1)
		if err == nil && len(runs) == 1 && runs[0].Status == jobs.RunRunning {
			run = runs[0]
			return true
		}
		return false
	})
	return run
}

// A replica running a job slot keeps its heartbeat fresh for the whole run
// (another replica takes the run over at once only when it goes stale),
// although it has no outbox row in flight meanwhile.
func TestSchedulerRunKeepsHeartbeat(t *testing.T) {
	ctx := context.Background()
	dbURL, admin := replicasDB(t)
	llm, job := slowJob(t, admin, 6*time.Second)
	startReplica(t, dbURL, "a", llm.URL(), newRecorder())
	run := firstRun(t, admin, job)
	seen := func() time.Time {
		t.Helper()
		var at time.Time
		waitUntil(t, "a's heartbeat", func() bool {
			return admin.Pool().QueryRow(ctx, `SELECT seen_at FROM replicas WHERE owner = 'a'`).Scan(&at) == nil
		})
		return at
	}
	first := seen()
	waitUntil(t, "a's heartbeat to be renewed", func() bool { return seen().After(first) })
	runs, err := admin.RecentRuns(ctx, job.ID, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.ID == run.ID && r.Status != jobs.RunRunning {
			t.Fatalf("the first run is %s; want it still running while the heartbeat was read", r.Status)
		}
	}
}

// Two replicas try the same job slot while neither has a heartbeat stored
// (their Liveness never runs, so only the claims can beat): the one that
// claims the run has its heartbeat written with the claim, and the one
// that loses the slot writes none, not even on the later slots it finds
// busy.
func TestSchedulerClaimBeatsOnlyForTheWinner(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dbURL, admin := replicasDB(t)
	llm, job := slowJob(t, admin, 10*time.Second)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	lives := map[string]*bot.Liveness{}
	for _, owner := range []string{"a", "b"} {
		db, err := postgres.Open(ctx, dbURL, postgres.Options{})
		if err != nil {
			t.Fatal(err)
		}
		agent := &agentcore.Agent{Name: "default", Model: "m", History: db, Tools: tools.NewRegistry(tools.RegistryOptions{}),
			Provider: agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: llm.URL(), Model: "m"})}
		live := bot.NewLiveness(bot.LivenessOptions{Store: db, Owner: owner}) // never run
		lives[owner] = live
		s := jobs.NewScheduler(jobs.SchedulerOptions{Jobs: db, History: db, Agents: oneAgent{agent}, Owner: owner,
			Liveness: live, Tick: 100 * time.Millisecond, Lease: time.Minute, Grace: 20 * time.Second})
		wg.Go(func() { s.Run(ctx); db.Close() })
	}
	run := firstRun(t, admin, job)
	waitUntil(t, "a later slot is skipped while the run goes on", func() bool {
		runs, err := admin.RecentRuns(ctx, job.ID, 10)
		return err == nil && slices.ContainsFunc(runs, func(r jobs.JobRun) bool { return r.Status == jobs.RunSkipped })
	})
	rows, err := admin.Pool().Query(ctx, `SELECT owner FROM replicas ORDER BY owner`)
	if err != nil {
		t.Fatal(err)
	}
	owners, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(owners, []string{run.LeaseOwner}) {
		t.Fatalf("heartbeats of %q after %s claimed the run; want only the winner's", owners, run.LeaseOwner)
	}
	// The winner's Liveness knows its claim wrote the heartbeat (so Run
	// would not write it again at once); the loser's knows of none.
	for owner, live := range lives {
		covered := live.Pin()
		live.Unpin()
		if want := owner == run.LeaseOwner; covered != want {
			t.Errorf("%s's Liveness counts a heartbeat stored: %v; want %v", owner, covered, want)
		}
	}
}
