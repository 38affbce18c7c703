package embedded

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

	"github.com/switchboard-chat/switchboard/storage/pidlock"
	"github.com/switchboard-chat/switchboard/storage/postgres/redact"
)

// The embedded server's fixed names.
const (
	embeddedUser     = "switchboard"
	embeddedDatabase = "switchboard"
	// maxSocketPath is the longest unix socket path Linux accepts (sun_path
	// holds 108 bytes including the terminating NUL).
	maxSocketPath = 107
)

// Options configure Start.
type Options struct {
	// DataDir is switchboard's data directory. The server keeps its files
	// in DataDir/postgres and logs to DataDir/postgres.log, unless the
	// unprivileged user it runs as (when switchboard is root) cannot reach
	// DataDir: then they live in a root-owned directory of their own, such
	// as /var/lib/switchboard/postgres-<hash>, which is logged. The
	// password (DataDir/postgres.password) and the owner lock
	// (DataDir/postgres.lock) always stay in DataDir.
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

// Server is a private PostgreSQL server started from the machine's
// PostgreSQL binaries, for a single switchboard replica. Every connection
// must give a random password kept in the data directory.
//
// Of all the handles on one data directory (in this process or others),
// one runs the server: it holds the owner lock, restarts the server if it
// dies and stops it in Stop. The others reuse it, leave it running in
// Stop, and take over if the owner goes away.
type Server struct {
	bins    serverBinaries
	user    *serverUser // nil: runs as the current user
	dataDir string
	// home holds the cluster, its socket directory and its log: dataDir,
	// or a directory the server's user can reach (see clusterHome).
	home    string
	pgData  string
	sockDir string
	// tempSock is set when sockDir was created under os.TempDir because the
	// data directory's path is too long for a socket.
	tempSock bool
	logFile  string
	port     int
	password string
	logger   *slog.Logger

	watchStop chan struct{}
	watchDone chan struct{}

	mu      sync.Mutex
	owned   bool
	lock    *pidlock.Lock
	stopped bool
}

// Start starts (initialising on first use) the server of
// opts.DataDir and makes sure database "switchboard" exists. A server
// already running on the same data directory is reused: one another live
// switchboard process runs is left to it, one a dead process left behind
// is adopted. A cluster made by an older version that let everyone in
// without a password gets one on the way.
func Start(ctx context.Context, opts Options) (*Server, error) {
	e, err := newServer(opts)
	if err != nil {
		return nil, err
	}
	if err := e.bringUp(ctx, opts.Port); err != nil {
		e.lock.Release()
		e.removeTempSock()
		return nil, redact.Error(err, e.password)
	}
	e.startWatchdog(ctx)
	return e, nil
}

// newServer finds the binaries, the server's user and the cluster's home.
func newServer(opts Options) (*Server, error) {
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
	e := &Server{bins: bins, dataDir: dataDir, logger: logger}
	if e.user, err = pickServerUser(filepath.Join(dataDir, "postgres")); err != nil {
		return nil, err
	}
	mode := os.FileMode(0o700)
	if e.user != nil {
		mode = 0o711 // a data_dir made here lets the server's user through
	}
	if err := os.MkdirAll(dataDir, mode); err != nil {
		return nil, fmt.Errorf("embedded postgres: create data_dir: %w; set data_dir to a writable folder", err)
	}
	home, blocked, err := clusterHome(dataDir, e.user)
	if err != nil {
		return nil, err
	}
	e.setHome(home)
	if home != dataDir {
		// The cluster moved: its owner, if it exists, is who runs it.
		if e.user, err = pickServerUser(e.pgData); err != nil {
			return nil, err
		}
		logger.Info("embedded postgres: the cluster lives outside data_dir, where its user can reach it",
			"user", e.user.name, "not_searchable", blocked, "data_dir", dataDir, "cluster", home)
	}
	return e, nil
}

// setHome places the cluster and its log under home.
func (e *Server) setHome(home string) {
	e.home = home
	e.pgData = filepath.Join(home, "postgres")
	e.logFile = filepath.Join(home, "postgres.log")
}

// URL returns the connection URL of database "switchboard". It holds the
// password: pass it on, never log it.
func (e *Server) URL() string { return e.url(embeddedDatabase) }

func (e *Server) url(database string) string {
	u := url.URL{
		Scheme:   "postgres",
		User:     url.UserPassword(embeddedUser, e.password),
		Host:     net.JoinHostPort("127.0.0.1", strconv.Itoa(e.port)),
		Path:     "/" + database,
		RawQuery: "sslmode=disable",
	}
	return u.String()
}

// String names the server without its password, so printing or logging an
// Server never shows it.
func (e *Server) String() string {
	return "embedded postgres on 127.0.0.1:" + strconv.Itoa(e.port) + " (" + e.pgData + ")"
}

// ClusterDir returns the directory holding the cluster's files: the
// postgres folder of the data directory, or where it moved (see
// Options.DataDir).
func (e *Server) ClusterDir() string { return e.pgData }

// Stop ends this handle. When it runs the server, it shuts it down (pg_ctl
// stop -m fast, waiting up to a minute); a server another process runs is
// left running. A cancelled ctx does not cut a shutdown short, so Stop can
// be called with the context whose cancellation triggered it. Calling it
// again does nothing.
func (e *Server) Stop(ctx context.Context) error {
	ctx = context.WithoutCancel(ctx)
	e.mu.Lock()
	if e.stopped {
		e.mu.Unlock()
		return nil
	}
	e.stopped = true
	e.mu.Unlock()
	e.stopWatchdog()
	e.mu.Lock()
	defer e.mu.Unlock()
	defer func() { e.lock.Release(); e.lock, e.owned = nil, false }()
	if !e.owned {
		e.logger.Info("embedded postgres: leaving the server running for the switchboard process that runs it", "data_dir", e.pgData)
		return nil
	}
	if err := e.stopServer(ctx); err != nil {
		return err
	}
	e.logger.Info("embedded postgres stopped", "data_dir", e.pgData)
	return nil
}

// stopServer shuts the server of pgData down, if it runs.
func (e *Server) stopServer(ctx context.Context) error {
	defer e.removeTempSock()
	if _, err := os.Stat(filepath.Join(e.pgData, "postmaster.pid")); errors.Is(err, os.ErrNotExist) {
		return nil // already down (stopped through another handle, or it died)
	}
	if err := e.run(ctx, e.bins.pgCtl, "stop", "-D", e.pgData, "-m", "fast", "-w", "-t", "60"); err != nil {
		return fmt.Errorf("embedded postgres: stop: %w; stop it with `pg_ctl stop -D %s`", err, e.pgData)
	}
	return nil
}

// initdb creates the cluster on first use (fresh), with password (SCRAM)
// authentication on the socket and on loopback. It initialises a scratch
// directory and renames it into place, so an interrupted initdb never
// leaves a half-made data directory behind. initdb reads the password's
// SCRAM verifier, never the password, from a file in the scratch
// directory, which only the server's user can enter.
func (e *Server) initdb(ctx context.Context) (fresh bool, err error) {
	if _, err := os.Stat(filepath.Join(e.pgData, "PG_VERSION")); err == nil {
		return false, nil
	}
	if entries, err := os.ReadDir(e.pgData); err == nil {
		if len(entries) > 0 {
			return false, fmt.Errorf("embedded postgres: %s exists but is not a PostgreSQL data directory; move it away or set database.url", e.pgData)
		}
		if err := os.Remove(e.pgData); err != nil {
			return false, fmt.Errorf("embedded postgres: %w", err)
		}
	}
	scratch := e.pgData + ".initdb"
	if err := os.RemoveAll(scratch); err != nil {
		return false, fmt.Errorf("embedded postgres: remove leftover %s: %w", scratch, err)
	}
	defer os.RemoveAll(scratch)
	if err := os.Mkdir(scratch, 0o700); err != nil {
		return false, fmt.Errorf("embedded postgres: %w", err)
	}
	verifier, err := scramVerifier(e.password)
	if err != nil {
		return false, fmt.Errorf("embedded postgres: hash the password: %w", err)
	}
	pwFile := filepath.Join(scratch, "pwfile")
	if err := os.WriteFile(pwFile, []byte(verifier+"\n"), 0o600); err != nil {
		return false, fmt.Errorf("embedded postgres: %w", err)
	}
	for _, p := range []string{scratch, pwFile} {
		if err := e.user.chown(p); err != nil {
			return false, err
		}
	}
	e.logger.Info("embedded postgres: initialising a new cluster", "data_dir", e.pgData)
	cluster := filepath.Join(scratch, "postgres")
	if err := e.run(ctx, e.bins.initdb, "-D", cluster, "-U", embeddedUser, "--pwfile="+pwFile,
		"--auth-local=scram-sha-256", "--auth-host=scram-sha-256", "-E", "UTF8", "--locale=C"); err != nil {
		return false, redact.Error(fmt.Errorf("embedded postgres: initdb: %w", err), verifier)
	}
	if err := os.Rename(cluster, e.pgData); err != nil {
		return false, fmt.Errorf("embedded postgres: %w", err)
	}
	return true, nil
}

// prepareRuntime creates the socket directory and the log file, owned by the
// server's user.
func (e *Server) prepareRuntime() error {
	e.sockDir = filepath.Join(e.home, "postgres-socket")
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
func (e *Server) start(ctx context.Context, port int) error {
	for attempt := 1; ; attempt++ {
		if port == 0 {
			p, err := freePort()
			if err != nil {
				return fmt.Errorf("embedded postgres: pick a port: %w", err)
			}
			e.port = p
		} else if e.port != port {
			e.port = port // a restart passes e.port: no write then, URL may be read meanwhile
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
func (e *Server) waitReady(ctx context.Context, pid int, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, e.url("postgres"))
		if err == nil {
			return conn.Close(ctx)
		}
		if isAuthError(err) {
			return fmt.Errorf("%w; the password in %s does not match the server's: remove that file and start again to set a new one",
				err, filepath.Join(e.dataDir, passwordFileName))
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
func (e *Server) createDatabase(ctx context.Context) error {
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
func (e *Server) run(ctx context.Context, prog string, args ...string) error {
	cmd := e.user.command(ctx, e.home, prog, args...)
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

func (e *Server) removeTempSock() {
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
