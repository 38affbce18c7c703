package embedded

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"
)

// Who runs the server: of all handles on one data directory, the one
// holding the owner lock starts (or adopts) it; the others join it.

// bringUp becomes the owner and starts (or adopts) the server, or, when
// another handle owns it, joins the server that one runs.
func (e *Server) bringUp(ctx context.Context, port int) error {
	deadline := time.Now().Add(time.Minute)
	for {
		lock, holder, err := e.tryOwnerLock()
		if err != nil {
			return err
		}
		if lock != nil {
			e.lock, e.owned = lock, true
			return e.own(ctx, port)
		}
		joined, err := e.join(ctx, holder)
		if err != nil || joined {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("embedded postgres: the server of %s is run by another switchboard process (pid %d) but has not come up for a minute; "+
				"check that process and %s, or stop it and start again", e.dataDir, holder, e.logFile)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("embedded postgres: wait for the server of another switchboard process (pid %d): %w", holder, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// join reuses the server the owner (pid holder) runs, when it is up.
func (e *Server) join(ctx context.Context, holder int) (bool, error) {
	p, ok := e.runningServer(ctx)
	if !ok {
		return false, nil // not up yet, or being restarted
	}
	if _, err := e.loadPassword(false); err != nil {
		return false, fmt.Errorf("%w; the server is run by another switchboard process (pid %d): stop it and start again", err, holder)
	}
	e.port = p.port
	err := e.waitReady(ctx, p.pid, 30*time.Second)
	if errors.Is(err, errServerGone) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if err := e.createDatabase(ctx); err != nil {
		return false, err
	}
	e.logger.Info("embedded postgres: using the server another switchboard process runs; it keeps running when this one exits",
		"pid", holder, "port", e.port, "data_dir", e.pgData)
	return true, nil
}

// own brings the server up as its owner: it adopts one a dead process left
// running, or initialises and starts it, setting a password first where
// the cluster has none.
func (e *Server) own(ctx context.Context, port int) error {
	created, err := e.loadPassword(true)
	if err != nil {
		return err
	}
	state, pid, err := e.inspectPidFile(ctx)
	if err != nil {
		return err
	}
	if state == serverRunning {
		adopted, err := e.adopt(ctx, pid, created)
		if err != nil || adopted {
			return err
		}
	}
	fresh, err := e.initdb(ctx)
	if err != nil {
		return err
	}
	if !fresh {
		trusts, err := e.hbaTrusts()
		if err != nil {
			return err
		}
		if trusts || created {
			if err := e.secureOffline(ctx); err != nil {
				return err
			}
			e.logSecured(trusts)
		}
	}
	if err := e.prepareRuntime(); err != nil {
		return err
	}
	if err := e.start(ctx, port); err != nil {
		return err
	}
	if err := e.createDatabase(ctx); err != nil {
		_ = e.stopServer(context.WithoutCancel(ctx))
		return err
	}
	e.logger.Info("embedded postgres started (single replica only; set database.url to share a server between replicas)",
		"port", e.port, "data_dir", e.pgData, "log", e.logFile)
	return nil
}

// adopt takes over the server a previous run left running. It reports
// false when that server turned out to be going away, or had to be stopped
// because its password is unknown (created: the password file was just
// made), so the caller starts it anew.
func (e *Server) adopt(ctx context.Context, pid postmasterPid, created bool) (bool, error) {
	trusts, err := e.hbaTrusts()
	if err != nil {
		return false, err
	}
	if created && !trusts {
		e.logger.Warn("embedded postgres: the password file was missing; restarting the running server with a new password",
			"pid", pid.pid, "data_dir", e.pgData)
		return false, e.stopServer(ctx)
	}
	e.port = pid.port
	e.logger.Info("embedded postgres: reusing the server a previous run left running",
		"pid", pid.pid, "port", pid.port, "data_dir", e.pgData)
	err = e.waitReady(ctx, pid.pid, 30*time.Second)
	if errors.Is(err, errServerGone) {
		// It was dying (killed with the daemon): clear its traces and start anew.
		_, _, err := e.inspectPidFile(ctx)
		return false, err
	}
	if err != nil {
		return false, fmt.Errorf("embedded postgres: a server (pid %d) is still running on %s but does not answer on port %d: %w; "+
			"stop it with `pg_ctl stop -D %s` and start again", pid.pid, e.pgData, pid.port, err, e.pgData)
	}
	if trusts {
		if err := e.secureOnline(ctx); err != nil {
			return false, err
		}
		e.logSecured(true)
	}
	return true, e.createDatabase(ctx)
}

// logSecured says a cluster was given a password (never which).
func (e *Server) logSecured(wasTrust bool) {
	pwFile := filepath.Join(e.dataDir, passwordFileName)
	if wasTrust {
		e.logger.Info("embedded postgres: the cluster let every local user in without a password; it now requires the password in the password file",
			"data_dir", e.pgData, "password_file", pwFile)
		return
	}
	e.logger.Warn("embedded postgres: the password file was missing; gave the cluster a new password",
		"data_dir", e.pgData, "password_file", pwFile)
}
