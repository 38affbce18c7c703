package embedded

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres/redact"
)

// watchdogInterval is how often the watchdog looks at the server.
var watchdogInterval = time.Second

// startWatchdog runs watch until Stop.
func (e *Server) startWatchdog(ctx context.Context) {
	e.watchStop = make(chan struct{})
	e.watchDone = make(chan struct{})
	go e.watch(context.WithoutCancel(ctx))
}

// stopWatchdog ends the watchdog, waiting for a restart in progress to end.
func (e *Server) stopWatchdog() {
	if e.watchStop == nil {
		return
	}
	close(e.watchStop)
	<-e.watchDone
}

// watch keeps the server up while this Server runs it: when its
// postmaster is gone it starts it again on the same port (the URL handed
// out stays valid). A handle that reuses another process's server takes
// over once that process lets go of the owner lock (it stopped or died),
// so the server outlives whichever process started it while any needs it.
// An outage is logged once, however many attempts it takes.
func (e *Server) watch(ctx context.Context) {
	defer close(e.watchDone)
	tick := time.NewTicker(watchdogInterval)
	defer tick.Stop()
	down, failed := false, false
	for {
		select {
		case <-e.watchStop:
			return
		case <-tick.C:
		}
		if !e.owns() {
			lock, _, err := e.tryOwnerLock()
			if err != nil || lock == nil {
				continue
			}
			e.mu.Lock()
			e.lock, e.owned = lock, true
			e.mu.Unlock()
			e.logger.Info("embedded postgres: the switchboard process that ran the server let go of it; this process runs it now",
				"data_dir", e.pgData)
		}
		if _, ok := e.runningServer(ctx); ok {
			continue
		}
		if !down {
			e.logger.Warn("embedded postgres: the server is gone; starting it again", "data_dir", e.pgData, "port", e.port)
			down, failed = true, false
		}
		if err := e.restart(ctx); err != nil {
			if !failed {
				e.logger.Error("embedded postgres: restart failed; retrying every second", "err", redact.Error(err, e.password))
				failed = true
			}
			continue
		}
		e.logger.Info("embedded postgres: restarted", "port", e.port, "data_dir", e.pgData)
		down = false
	}
}

// restart starts the server again on its port after it died.
func (e *Server) restart(ctx context.Context) error {
	if _, _, err := e.inspectPidFile(ctx); err != nil {
		return err
	}
	e.removeTempSock()
	if err := e.prepareRuntime(); err != nil {
		return err
	}
	return e.start(ctx, e.port)
}

// owns reports whether this handle runs the server (and so stops it).
func (e *Server) owns() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.owned
}
