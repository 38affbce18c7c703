package bot_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/tools"
)

// TestTurnsRunOnePassAtATime: passes sharing a Turns never overlap, each
// runs once and its error comes back; a nil Turns runs the pass at once;
// a pass whose context ends while it waits does not run.
func TestTurnsRunOnePassAtATime(t *testing.T) {
	turns := bot.NewTurns()
	var running, most, ran atomic.Int32
	errPass := errors.New("pass failed")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			err := turns.Run(context.Background(), func(context.Context) error {
				n := running.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				time.Sleep(5 * time.Millisecond)
				running.Add(-1)
				ran.Add(1)
				if i == 0 {
					return errPass
				}
				return nil
			})
			if (i == 0) != errors.Is(err, errPass) {
				t.Errorf("pass %d: Run returned %v", i, err)
			}
		})
	}
	wg.Wait()
	if most.Load() != 1 || ran.Load() != 8 {
		t.Fatalf("passes at once at most %d (want 1), ran %d (want 8)", most.Load(), ran.Load())
	}

	var none *bot.Turns
	called := false
	if err := none.Run(context.Background(), func(context.Context) error { called = true; return nil }); err != nil || !called {
		t.Fatalf("nil Turns: err %v, called %v", err, called)
	}

	hold := make(chan struct{})
	holding := make(chan struct{})
	go func() {
		_ = turns.Run(context.Background(), func(context.Context) error { close(holding); <-hold; return nil })
	}()
	<-holding
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	err := turns.Run(ctx, func(context.Context) error { t.Error("a pass ran after its context ended"); return nil })
	close(hold)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiting pass: err %v, want its context's", err)
	}
}

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
	sched := bot.NewScheduler(bot.SchedulerOptions{Jobs: db, History: db, Outbox: db, Agent: agent, Owner: "a",
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
