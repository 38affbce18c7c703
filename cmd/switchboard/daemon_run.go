package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/sethvargo/go-retry"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/skills"
	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// migrateUntilDone applies migrations, retrying while Postgres is down:
// after 0.5 s, doubling up to 10 s, until ctx ends.
func (d *daemon) migrateUntilDone(ctx context.Context) {
	failures := 0
	_ = retry.Do(ctx, retry.WithCappedDuration(10*time.Second, retry.NewExponential(500*time.Millisecond)), func(ctx context.Context) error {
		err := postgres.Migrate(ctx, d.st.db)
		if err != nil {
			if failures == 0 {
				d.log.Error("database not usable yet; retrying in the background (check database.url)", "err", err)
			}
			failures++
			return retry.RetryableError(err)
		}
		d.migrated.Store(true)
		if failures > 0 {
			d.log.Info("database migrations applied after retrying")
		}
		return nil
	})
}

// run serves until ctx is cancelled, then shuts down in order.
func (d *daemon) run(ctx context.Context, listen string) error {
	defer d.st.close(ctx)
	start := time.Now()
	srv, err := d.serveHTTP(listen)
	if err != nil {
		return err
	}
	if ready, err := d.prepare(ctx); !ready {
		return err
	}
	// Inbound stops first; the dispatcher and recovery outlive it so the
	// replies of the last runs still go out.
	chCtx, stopChannels := context.WithCancel(ctx)
	defer stopChannels()
	bgCtx, stopBackground := context.WithCancel(context.WithoutCancel(ctx))
	defer stopBackground()
	var bg, chans sync.WaitGroup
	for _, s := range d.cfg.MCP.Servers {
		d.mcp.Add(mcpServer(s))
	}
	defer d.mcp.Close() // stdio servers and their children stop with the daemon
	defer d.procs.Close()
	d.startChannels(chCtx, &chans)
	d.startBackground(chCtx, bgCtx, &bg)
	d.log.Info("switchboard started", "version", version, "channels", len(d.channels), "startup_ms", time.Since(start).Milliseconds())

	<-ctx.Done()
	d.log.Info("shutting down")
	stopChannels()
	chans.Wait()
	d.finishRuns(ctx)
	stopBackground()
	bg.Wait()
	if srv != nil {
		shutdownCtx, stop := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = srv.Shutdown(shutdownCtx)
		stop()
	}
	flushCtx, stopFlush := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	d.tracing.shutdown(flushCtx)
	stopFlush()
	d.log.Info("stopped")
	return nil
}

// serveHTTP starts the HTTP server (health, metrics, webhooks, admin API)
// on listen in the background; with listen empty it serves nothing and
// returns nil.
func (d *daemon) serveHTTP(listen string) (*http.Server, error) {
	if listen == "" {
		return nil, nil
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("http.listen %s: %w (is another switchboard running? change http.listen)", listen, err)
	}
	srv := &http.Server{
		Handler: bot.NewHTTPHandler(bot.HTTPOptions{Checks: d.checks(), Metrics: d.writeMetrics, Webhooks: d.webhooks(),
			Admin: d.adminAPI(), Console: d.console.Handler(), Replica: d.replica, Leaderships: d.leaderships}),
		ReadHeaderTimeout: 10 * time.Second,
	}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			d.log.Error("http server stopped", "err", err)
		}
	}()
	d.log.Info("http listening", "addr", ln.Addr().String())
	return srv, nil
}

// prepare migrates the database (waiting while it is down) and loads the
// stored custom tools, MCP servers and configured jobs. ready is false when
// the daemon must not start: ctx ended (err nil) or a load failed.
func (d *daemon) prepare(ctx context.Context) (ready bool, err error) {
	d.migrateUntilDone(ctx)
	if ctx.Err() != nil {
		return false, nil
	}
	if err := d.loadCustomTools(ctx); err != nil {
		return false, err
	}
	if err := d.loadMCPServers(ctx); err != nil {
		return false, err
	}
	if err := d.syncJobs(ctx); err != nil {
		d.log.Error("jobs from config not synced; scheduled jobs may be stale", "err", err)
	}
	return true, nil
}

// startChannels runs the leader tasks and every channel until ctx ends,
// a channel with a leader only while this replica leads it.
func (d *daemon) startChannels(ctx context.Context, wg *sync.WaitGroup) {
	for _, t := range d.leaderTasks {
		wg.Add(1)
		go func() { defer wg.Done(); t.leader.Run(ctx, t.run) }()
	}
	for name, ch := range d.channels {
		wg.Add(1)
		go func() {
			defer wg.Done()
			start := func(ctx context.Context) error { return ch.Start(ctx, d.router.Handle) }
			if l := d.leaders[name]; l != nil {
				l.Run(ctx, start)
				return
			}
			if err := start(ctx); err != nil {
				d.log.Error("channel stopped", "channel", name, "err", err)
			}
		}()
	}
}

// startBackground starts the background loops: the heartbeat, the docs
// cache, the dispatcher, the scheduler, recovery, team mail, the prunings
// of retention and the knowledge extraction. Those that
// take new work stop with chCtx; those that finish it (delivery, recovery,
// the heartbeat) with bgCtx.
func (d *daemon) startBackground(chCtx, bgCtx context.Context, wg *sync.WaitGroup) {
	// The background loops start once the channels are up (at most a second
	// later): their first passes deliver, recover and post to chats, which
	// needs the channels, and until then the channels' start-up gets the
	// database connection the start-up used instead of queueing behind the
	// loops' new ones, so the chat is answered sooner.
	up := d.channelsUpWithin(chCtx, time.Second)
	// teamMailInterval: how often every inbox is looked at for mail a crash
	// or an outage left unmoved.
	const teamMailInterval = 5 * time.Second
	prunings := d.prunings()
	wg.Add(10 + len(prunings))
	go func() { defer wg.Done(); d.live.Run(bgCtx) }() // through Drain
	go func() { defer wg.Done(); <-up; d.st.docs.Listen(chCtx) }()
	go func() { defer wg.Done(); <-up; d.st.skills.Listen(chCtx) }()
	go func() { defer wg.Done(); <-up; d.disp.Run(bgCtx) }()
	go func() { defer wg.Done(); <-up; d.sched.Run(chCtx) }()
	go func() { defer wg.Done(); <-up; d.router.RunRecovery(bgCtx, bot.DefaultRecoveryInterval) }()
	go func() { defer wg.Done(); <-up; d.approvals.RunExpiry(bgCtx, bot.DefaultRecoveryInterval) }()
	go func() { defer wg.Done(); <-up; d.questions.RunExpiry(bgCtx, bot.DefaultRecoveryInterval) }()
	go func() { defer wg.Done(); <-up; d.teams.RunMail(chCtx, d.cfg.TeamNames(), teamMailInterval) }()
	for _, p := range prunings {
		go func() { defer wg.Done(); <-up; p.Loop(chCtx) }()
	}
	go func() { defer wg.Done(); d.router.RunStops(bgCtx) }() // a stop must reach the runs that finish after chCtx
	wg.Add(1)
	go func() { defer wg.Done(); d.skills.Dirs().Run(chCtx, skills.RescanEvery) }() // the skill folders read again when they change
	if d.knowledge != nil {
		wg.Add(1)
		go func() { defer wg.Done(); <-up; d.knowledge.Run(chCtx) }() // a job in flight is handed back
	}
}

// finishRuns gives the runs in flight a few seconds to finish (container
// runtimes kill after ~10s; those cut short resume from their saved
// session after the restart), then the outbox two to send their replies.
func (d *daemon) finishRuns(ctx context.Context) {
	runsCtx, stopRuns := context.WithTimeout(context.WithoutCancel(ctx), 6*time.Second)
	_ = d.router.Close(runsCtx)
	stopRuns()
	drainCtx, stopDrain := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
	d.disp.Drain(drainCtx)
	stopDrain()
}
