package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// The embedded server's fixed names.
const (
	embeddedUser     = "switchboard"
	embeddedDatabase = "switchboard"
	// maxSocketPath is the longest unix socket path Linux accepts (sun_path
	// holds 108 bytes including the terminating NUL).
	maxSocketPath = 107
)

// EmbeddedOptions configure StartEmbedded.
type EmbeddedOptions struct {
	// DataDir is switchboard's data directory; the server keeps its files
	// in DataDir/postgres and logs to DataDir/postgres.log.
	DataDir string
	// Logger receives the package's logs; nil discards them.
	Logger *slog.Logger
	// Port is the TCP port on 127.0.0.1; 0 picks a free one.
	Port int
	// BinDir, when set, is the only directory searched for initdb and
	// pg_ctl; empty searches PATH, then /usr/lib/postgresql/*/bin (newest
	// version first).
	BinDir string
}

// Embedded is a private PostgreSQL server started from the machine's
// PostgreSQL binaries, for a single switchboard replica.
type Embedded struct {
	bins    serverBinaries
	user    *serverUser // nil: runs as the current user
	dataDir string
	pgData  string
	sockDir string
	// tempSock is set when sockDir was created under os.TempDir because the
	// data directory's path is too long for a socket.
	tempSock bool
	logFile  string
	port     int
	logger   *slog.Logger

	mu      sync.Mutex
	stopped bool
}

// StartEmbedded starts (initialising on first use) the server of
// opts.DataDir and makes sure database "switchboard" exists. A server a
// previous run left running on the same data directory is reused.
func StartEmbedded(ctx context.Context, opts EmbeddedOptions) (*Embedded, error) {
	if opts.DataDir == "" {
		return nil, errors.New("embedded postgres: data_dir is empty; set data_dir (SWITCHBOARD_DATA_DIR)")
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return nil, fmt.Errorf("embedded postgres: data_dir %s: %w", opts.DataDir, err)
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	bins, err := findServerBinaries(opts.BinDir, os.Getenv("PATH"), defaultLibGlob)
	if err != nil {
		return nil, err
	}
	e := &Embedded{
		bins:    bins,
		dataDir: dataDir,
		pgData:  filepath.Join(dataDir, "postgres"),
		logFile: filepath.Join(dataDir, "postgres.log"),
		logger:  logger,
	}
	if e.user, err = pickServerUser(e.pgData); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, fmt.Errorf("embedded postgres: create data_dir: %w", err)
	}
	if err := e.user.makeReachable(dataDir); err != nil {
		return nil, err
	}

	state, pid, err := e.inspectPidFile(ctx)
	if err != nil {
		return nil, err
	}
	if state == serverRunning {
		e.port = pid.port
		logger.Info("embedded postgres: reusing the server a previous run left running",
			"pid", pid.pid, "port", pid.port, "data_dir", e.pgData)
		err := e.waitReady(ctx, pid.pid, 30*time.Second)
		if err == nil {
			if err := e.createDatabase(ctx); err != nil {
				return nil, err
			}
			return e, nil
		}
		if !errors.Is(err, errServerGone) {
			return nil, fmt.Errorf("embedded postgres: a server (pid %d) is still running on %s but does not answer on port %d: %w; "+
				"stop it with `pg_ctl stop -D %s` and start again", pid.pid, e.pgData, pid.port, err, e.pgData)
		}
		// It was dying (killed with the daemon): clear its traces and start anew.
		if _, _, err := e.inspectPidFile(ctx); err != nil {
			return nil, err
		}
	}

	if err := e.initdb(ctx); err != nil {
		return nil, err
	}
	if err := e.prepareRuntime(); err != nil {
		return nil, err
	}
	if err := e.start(ctx, opts.Port); err != nil {
		e.removeTempSock()
		return nil, err
	}
	if err := e.createDatabase(ctx); err != nil {
		_ = e.Stop(context.WithoutCancel(ctx))
		return nil, err
	}
	logger.Info("embedded postgres started (single replica only; set database.url to share a server between replicas)",
		"port", e.port, "data_dir", e.pgData, "log", e.logFile)
	return e, nil
}

// URL returns the connection URL of database "switchboard".
func (e *Embedded) URL() string { return e.url(embeddedDatabase) }

func (e *Embedded) url(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.User(embeddedUser),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(e.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// Stop shuts the server down (pg_ctl stop -m fast), waiting up to a minute.
// A cancelled ctx does not cut a shutdown short, so Stop can be called with
// the context whose cancellation triggered it. Calling it again does nothing.
func (e *Embedded) Stop(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.stopped {
		return nil
	}
	if _, err := os.Stat(filepath.Join(e.pgData, "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		// Already down (stopped through another handle, or it died).
		e.stopped = true
		e.removeTempSock()
		return nil
	}
	if err := e.run(ctx, e.bins.pgCtl, "stop", "-D", e.pgData, "-m", "fast", "-w", "-t", "60"); err != nil {
		return fmt.Errorf("embedded postgres: stop: %w", err)
	}
	e.stopped = true
	e.removeTempSock()
	e.logger.Info("embedded postgres stopped", "data_dir", e.pgData)
	return nil
}

// initdb creates the cluster on first use. It initialises a scratch
// directory and renames it into place, so an interrupted initdb never
// leaves a half-made data directory behind.
func (e *Embedded) initdb(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(e.pgData, "PG_VERSION")); err == nil {
		return nil
	}
	if entries, err := os.ReadDir(e.pgData); err == nil {
		if len(entries) > 0 {
			return fmt.Errorf("embedded postgres: %s exists but is not a PostgreSQL data directory; move it away or set database.url", e.pgData)
		}
		if err := os.Remove(e.pgData); err != nil {
			return fmt.Errorf("embedded postgres: %w", err)
		}
	}
	scratch := e.pgData + ".initdb"
	if err := os.RemoveAll(scratch); err != nil {
		return fmt.Errorf("embedded postgres: remove leftover %s: %w", scratch, err)
	}
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return fmt.Errorf("embedded postgres: %w", err)
	}
	if err := e.user.chown(scratch); err != nil {
		return err
	}
	e.logger.Info("embedded postgres: initialising a new cluster", "data_dir", e.pgData)
	if err := e.run(ctx, e.bins.initdb, "-D", scratch, "-U", embeddedUser, "--auth=trust",
		"-E", "UTF8", "--locale=C"); err != nil {
		_ = os.RemoveAll(scratch)
		return fmt.Errorf("embedded postgres: initdb: %w", err)
	}
	if err := os.Rename(scratch, e.pgData); err != nil {
		return fmt.Errorf("embedded postgres: %w", err)
	}
	return nil
}

// prepareRuntime creates the socket directory and the log file, owned by the
// server's user.
func (e *Embedded) prepareRuntime() error {
	e.sockDir = filepath.Join(e.dataDir, "postgres-socket")
	if len(e.sockDir)+len("/.s.PGSQL.65535") > maxSocketPath {
		dir, err := os.MkdirTemp("", "sbpg-")
		if err != nil {
			return fmt.Errorf("embedded postgres: socket directory: %w", err)
		}
		e.sockDir, e.tempSock = dir, true
	} else {
		if err := os.MkdirAll(e.sockDir, 0o700); err != nil {
			return fmt.Errorf("embedded postgres: socket directory: %w", err)
		}
		removeStaleSockets(e.sockDir)
	}
	if err := e.user.chown(e.sockDir); err != nil {
		return err
	}
	f, err := os.OpenFile(e.logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("embedded postgres: log file: %w", err)
	}
	_ = f.Close()
	return e.user.chown(e.logFile)
}

// start runs pg_ctl start and waits until the server accepts connections.
// With no fixed port it picks a free one, and picks again if another program
// took it in the meantime.
func (e *Embedded) start(ctx context.Context, port int) error {
	for attempt := 1; ; attempt++ {
		e.port = port
		if port == 0 {
			p, err := freePort()
			if err != nil {
				return fmt.Errorf("embedded postgres: pick a port: %w", err)
			}
			e.port = p
		}
		logStart := fileSize(e.logFile)
		serverOpts := "-p " + strconv.Itoa(e.port) + " -k " + shellQuote(e.sockDir) + " -c listen_addresses=127.0.0.1"
		err := e.run(ctx, e.bins.pgCtl, "start", "-w", "-t", "60", "-D", e.pgData, "-l", e.logFile, "-o", serverOpts)
		if err == nil {
			return nil
		}
		logTail := readFrom(e.logFile, logStart)
		if port == 0 && attempt < 3 && strings.Contains(logTail, "already in use") {
			continue
		}
		return fmt.Errorf("embedded postgres: start on port %d: %w; server log %s says: %s", e.port, err, e.logFile, lastLines(logTail, 8))
	}
}

// errServerGone says the server being waited for exited.
var errServerGone = errors.New("server exited")

// waitReady polls until the server with pid accepts a connection, exits
// (errServerGone), or timeout passes.
func (e *Embedded) waitReady(ctx context.Context, pid int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, e.url("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		if !processAlive(pid) || !e.servesDataDir(ctx, pid) {
			return errServerGone
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// createDatabase creates database "switchboard" unless it exists.
func (e *Embedded) createDatabase(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, e.url("postgres"))
	if err != nil {
		return fmt.Errorf("embedded postgres: connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, embeddedDatabase).Scan(&exists); err != nil {
		return fmt.Errorf("embedded postgres: look up database: %w", err)
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{embeddedDatabase}.Sanitize())
	var pgErr *pgconn.PgError
	if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P04") { // 42P04: created meanwhile
		return fmt.Errorf("embedded postgres: create database: %w", err)
	}
	return nil
}

// run runs a PostgreSQL program as the server's user; a failure carries the
// program's output.
func (e *Embedded) run(ctx context.Context, prog string, args ...string) error {
	cmd := e.user.command(ctx, e.dataDir, prog, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			return fmt.Errorf("%s: %w", filepath.Base(prog), err)
		}
		return fmt.Errorf("%s: %w: %s", filepath.Base(prog), err, lastLines(msg, 8))
	}
	return nil
}

func (e *Embedded) removeTempSock() {
	if e.tempSock {
		_ = os.RemoveAll(e.sockDir)
	}
}

// freePort asks the kernel for a free TCP port on 127.0.0.1.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// shellQuote quotes s for the shell pg_ctl starts the server with.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func fileSize(path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return fi.Size()
}

// readFrom returns what path holds from offset on, at most 64 KiB of it.
func readFrom(path string, offset int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	return string(b)
}

// lastLines returns the last n lines of s joined by " | ".
func lastLines(s string, n int) string {
	lines := bytes.Split(bytes.TrimSpace([]byte(s)), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte(" | ")))
}
