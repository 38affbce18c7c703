package jobs_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/tools"
)

// TestIdleBackgroundPassesShareOneConnection runs an idle replica's
// background passes — the outbox's safety poll, the scheduler's check and
// the recovery pass — on one beat against a real PostgreSQL, as the daemon
// wires them (one Turns). They wake at the same moments, the first of them
// at once; taking turns, they never need a second pooled connection.
func TestIdleBackgroundPassesShareOneConnection(t *testing.T) {
	dbURL, _ := replicasDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := postgres.Open(ctx, dbURL, postgres.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	agent := &agentcore.Agent{Name: "default", Model: "m", History: db, Tools: tools.NewRegistry(tools.RegistryOptions{})}
	chans := map[string]channels.Channel{"test": newRecorder()}
	turns := bot.NewTurns()
	live := bot.NewLiveness(bot.LivenessOptions{Store: db, Owner: "a"})
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: chans, Owner: "a", Liveness: live,
		Turns: turns, Poll: time.Second})
	sched := jobs.NewScheduler(jobs.SchedulerOptions{Jobs: db, History: db, Outbox: db, Agents: oneAgent{agent}, Owner: "a",
		Liveness: live, Turns: turns, Tick: time.Second, Nudge: disp.Nudge})
	router := bot.NewRouter(bot.Options{Agent: agent, AgentName: "default", History: db, Outbox: db, Recovery: db,
		Identities: db, Channels: chans, Access: bot.AccessOptions{Mode: bot.AccessModeOpen},
		Dispatcher: disp, Turns: turns})
	var wg sync.WaitGroup
	wg.Go(func() { live.Run(ctx) })
	wg.Go(func() { disp.Run(ctx) })
	wg.Go(func() { sched.Run(ctx) })
	wg.Go(func() { router.RunRecovery(ctx, time.Second) })
	time.Sleep(3500 * time.Millisecond) // the first passes and three beats
	cancel()
	wg.Wait()
	if n := db.Pool().Stat().NewConnsCount(); n != 1 {
		t.Fatalf("the idle passes opened %d pooled connections; taking turns they need 1", n)
	}
}
