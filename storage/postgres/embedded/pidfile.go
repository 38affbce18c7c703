package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/switchboard-chat/switchboard/storage/pidlock"
)

// pidFileState is what postmaster.pid says about a data directory.
type pidFileState int

const (
	// noServer: there is no pid file (or a stale one was removed).
	noServer pidFileState = iota
	// serverRunning: a postgres of this data directory is still running.
	serverRunning
)

// postmasterPid is the parsed head of postmaster.pid.
type postmasterPid struct {
	pid  int
	port int
}

// parsePostmasterPid reads the lines of postmaster.pid that matter: the
// first is the pid, the fourth the port.
func parsePostmasterPid(data []byte) (postmasterPid, error) {
	lines := strings.Split(string(data), "\n")
	var p postmasterPid
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 0 {
		return p, fmt.Errorf("bad pid %q", lines[0])
	}
	p.pid = pid
	if len(lines) > 3 {
		p.port, _ = strconv.Atoi(strings.TrimSpace(lines[3]))
	}
	return p, nil
}

// inspectPidFile decides whether the server of pgData is still running. A
// pid file is stale when its pid is dead, belongs to a process that is not a
// postgres serving pgData, or pg_ctl says no server runs; a stale file is
// removed so the next start does not trip over it.
func (e *Server) inspectPidFile(ctx context.Context) (pidFileState, postmasterPid, error) {
	path := filepath.Join(e.pgData, "postmaster.pid")
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return noServer, postmasterPid{}, nil
	}
	if err != nil {
		return noServer, postmasterPid{}, fmt.Errorf("embedded postgres: %w", err)
	}
	p, perr := parsePostmasterPid(data)
	if perr == nil && processAlive(p.pid) && e.servesDataDir(ctx, p.pid) {
		if p.port <= 0 {
			return noServer, p, fmt.Errorf("embedded postgres: a server (pid %d) is running on %s but its postmaster.pid names no port; "+
				"stop it with `pg_ctl stop -D %s` and start again", p.pid, e.pgData, e.pgData)
		}
		return serverRunning, p, nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return noServer, postmasterPid{}, fmt.Errorf("embedded postgres: remove stale %s: %w", path, err)
	}
	e.logger.Warn("embedded postgres: removed stale postmaster.pid", "pid", p.pid, "data_dir", e.pgData)
	return noServer, postmasterPid{}, nil
}

// processAlive reports whether a process with pid exists.
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// servesDataDir reports whether pid is a postgres whose working directory is
// pgData (the postmaster changes into its data directory). Where /proc is
// not available it asks pg_ctl status instead.
func (e *Server) servesDataDir(ctx context.Context, pid int) bool {
	proc := "/proc/" + strconv.Itoa(pid)
	comm, err := os.ReadFile(proc + "/comm")
	if err != nil {
		if _, statErr := os.Stat("/proc/self"); statErr == nil {
			return false // /proc works, so the process is gone or not ours
		}
		return e.run(ctx, e.bins.pgCtl, "status", "-D", e.pgData) == nil
	}
	if strings.TrimSpace(string(comm)) != "postgres" || exited(proc) {
		return false
	}
	cwd, err := os.Readlink(proc + "/cwd")
	if err != nil {
		return false
	}
	want, err := filepath.EvalSymlinks(e.pgData)
	if err != nil {
		return false
	}
	return cwd == want
}

// exited reports whether the process at proc (a /proc/<pid> directory) has
// died and only waits to be reaped (state Z or X): a killed server looks
// alive to kill(pid, 0) until then.
func exited(proc string) bool {
	stat, err := os.ReadFile(proc + "/stat")
	if err != nil {
		return true
	}
	// The state follows the parenthesised command name.
	i := strings.LastIndexByte(string(stat), ')')
	if i < 0 || i+2 >= len(stat) {
		return false
	}
	switch stat[i+2] {
	case 'Z', 'X', 'x':
		return true
	}
	return false
}

// removeStaleSockets deletes socket lock files a dead server left in a socket
// directory that belongs to this data directory alone.
func removeStaleSockets(sockDir string) {
	matches, _ := filepath.Glob(filepath.Join(sockDir, ".s.PGSQL.*"))
	for _, m := range matches {
		_ = os.Remove(m)
	}
}

// runningServer reports the server of pgData when one runs, reading
// postmaster.pid without ever removing it: only the owner may clear a stale
// pid file (inspectPidFile), or it could delete a newly started server's.
func (e *Server) runningServer(ctx context.Context) (postmasterPid, bool) {
	data, err := os.ReadFile(filepath.Join(e.pgData, "postmaster.pid"))
	if err != nil {
		return postmasterPid{}, false
	}
	p, err := parsePostmasterPid(data)
	if err != nil || p.port <= 0 {
		return postmasterPid{}, false
	}
	return p, processAlive(p.pid) && e.servesDataDir(ctx, p.pid)
}

// ownerLockName is the file under the data directory whose lock the
// process that runs the embedded server holds.
const ownerLockName = "postgres.lock"

// tryOwnerLock takes the owner lock without waiting: it returns a nil lock
// and the holder's pid (0 when not known) when another handle runs the
// server.
func (e *Server) tryOwnerLock() (*pidlock.Lock, int, error) {
	lock, holder, err := pidlock.TryLock(filepath.Join(e.dataDir, ownerLockName))
	if err != nil {
		return nil, 0, fmt.Errorf("embedded postgres: %w", err)
	}
	return lock, holder, nil
}
