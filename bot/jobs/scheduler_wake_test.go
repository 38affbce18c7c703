package jobs_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// With its safety check an hour away, the scheduler still runs a job added
// through its watched store at once, each next slot on time, and a retry
// when it comes due: it sleeps until then instead of polling.
func TestSchedulerWakesForSlotsAndRetriesWithoutPolling(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	var calls atomic.Int32
	llm.Handle(func(req llmtest.Request) llmtest.Reply {
		if calls.Add(1) == 1 {
			return llmtest.Reply{Status: 500} // the first slot's first attempt fails
		}
		return llmtest.Reply{Text: "done"}
	})
	agent := &agentcore.Agent{Name: "default", Model: "m", History: db, Tools: tools.NewRegistry(tools.RegistryOptions{}),
		Provider: agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: llm.URL(), Model: "m"})}
	ch := newRecorder()
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: map[string]channels.Channel{"test": ch}, Owner: "w"})
	s := jobs.NewScheduler(jobs.SchedulerOptions{Jobs: db, History: db, Agents: oneAgent{agent}, Owner: "w",
		Tick: time.Hour, RetryBase: 300 * time.Millisecond, Nudge: disp.Nudge})
	done := make(chan struct{}, 2)
	go func() { s.Run(ctx); done <- struct{}{} }()
	go func() { disp.Run(ctx); done <- struct{}{} }()
	defer func() { cancel(); <-done; <-done }()
	time.Sleep(100 * time.Millisecond) // Run's first check is over: it sleeps for an hour

	watched := s.WatchJobs(db)
	if _, err := watched.UpsertJob(ctx, jobs.Job{Name: "tick", Schedule: "@every 1s", Prompt: "status",
		Target: channels.Address{Platform: "test", ChatID: "room"}, Enabled: true, Overlap: jobs.OverlapQueue}); err != nil {
		t.Fatal(err)
	}
	// Three replies: the first slot after its retry, then the next slots.
	got := ch.WaitFor(t, "room", 3)
	if calls.Load() < 4 {
		t.Errorf("%d model calls for 3 replies; want the failed attempt retried", calls.Load())
	}
	for _, m := range got {
		if m.Text != "done" {
			t.Errorf("reply %q", m.Text)
		}
	}
}
