// Package postgres keeps everything switchboard must not lose in PostgreSQL:
// identities, sessions and messages, the outbox, and the schema migrations
// that create them. The private server used when no database URL is
// configured is run by package embedded.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"github.com/exaring/otelpgx"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/switchboard-chat/switchboard/storage/postgres/redact"
)

// connectTimeout bounds one connection attempt when the URL sets none.
const connectTimeout = 5 * time.Second

// openTimeout bounds the first ping Open makes when ctx has no earlier
// deadline, so a server that is down never blocks start-up for long.
const openTimeout = 10 * time.Second

// idleConnTimeout is how long a pooled connection may sit unused before
// the pool closes it, when the URL's pool_max_conn_idle_time sets nothing.
// pgx keeps them 30 minutes; after a burst its extra connections go
// within a minute, each with its client memory and a backend process on
// the server.
const idleConnTimeout = time.Minute

// pingIdleAfter is how long a pooled connection may sit unused before the
// pool pings it when it is next handed out. pgx pings after one second:
// an idle daemon, whose loops take a connection every second or two, would
// pay a ping for many of its statements. A
// connection that broke while idle for less fails its statement instead,
// and the store retries that on another (withRetry).
const pingIdleAfter = 10 * time.Second

// statementCacheSize is how many prepared statements each connection keeps
// when the URL's statement_cache_capacity sets nothing. The daemon runs
// SQL from about 160 places, a connection a few dozen of them; pgx's 512
// reserves about 27 KB per connection up front.
const statementCacheSize = 128

// DefaultMaxConns is the pool size when neither Options.MaxConns nor the
// URL's pool_max_conns sets one. The router's 64 lane workers share it: a
// run holds a connection only while it writes, not while it waits for the
// model.
const DefaultMaxConns = 16

// Options configure Open.
type Options struct {
	// Logger receives the package's logs; nil discards them.
	Logger *slog.Logger
	// MaxConns caps the pool size (database.max_conns). 0 means the URL's
	// pool_max_conns if it has one, else DefaultMaxConns.
	MaxConns int32
	// Tracing, when set, traces every query (a span per statement, child
	// of the caller's span).
	Tracing trace.TracerProvider
}

// DB is a pool of connections to the switchboard database. It implements
// agentcore.History, bot.Identities, bot.Outbox, bot.Recovery,
// approvals.Store, access.RequestStore and bot.DecisionMessages.
type DB struct {
	pool   *pgxpool.Pool
	logger *slog.Logger
	// where names the server (host:port) for error messages.
	where string
	// target is who connects to what, for the hints of failed connections.
	target connTarget
	// secret is the password, removed from every error.
	secret string
	// locks is the connection holding this replica's leader locks.
	locks lockState
	// appends groups concurrent Append and Insert calls into one commit,
	// replies concurrent InsertReply calls, usage concurrent InsertUsage
	// calls and finishes concurrent FinishWithReply calls.
	appends, replies, usage, finishes *groupCommit
	// prepares says queries run as cached prepared statements (pgx's
	// default mode; see once).
	prepares bool
}

// Open prepares a pool for the PostgreSQL server at url. It connects
// lazily: a server that is down now is logged, not an error, so the daemon
// can start and recover when the server comes back (Ping reports it
// meanwhile). Only a malformed URL fails. Errors never contain the password.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	if url == "" {
		return nil, errors.New("open postgres: database.url is empty; set database.url (SWITCHBOARD_DATABASE_URL) or leave it unset to use the embedded server")
	}
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, redact.Error(fmt.Errorf("open postgres: database.url is not a valid PostgreSQL URL (%s): %w", redact.URL(url), err), redact.URLPassword(url))
	}
	secret := cfg.ConnConfig.Password
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = connectTimeout
	}
	sizeStatementCaches(cfg.ConnConfig, url)
	if !strings.Contains(url, "pool_max_conn_idle_time") {
		cfg.MaxConnIdleTime = idleConnTimeout
	}
	cfg.ShouldPing = func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		return p.IdleDuration >= pingIdleAfter
	}
	if opts.Tracing != nil {
		cfg.ConnConfig.Tracer = otelpgx.NewTracer(otelpgx.WithTracerProvider(opts.Tracing), otelpgx.WithDisableSQLStatementInAttributes())
	}
	switch {
	case opts.MaxConns > 0:
		cfg.MaxConns = opts.MaxConns
	case !strings.Contains(url, "pool_max_conns"):
		cfg.MaxConns = DefaultMaxConns
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	where := serverAddr(cfg.ConnConfig.Host, cfg.ConnConfig.Port)
	target := connTarget{host: cfg.ConnConfig.Host, port: cfg.ConnConfig.Port, user: cfg.ConnConfig.User, database: cfg.ConnConfig.Database}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, redact.Error(fmt.Errorf("connect to postgres at %s: %w%s", where, err, target.hint(err)), secret)
	}
	db := &DB{pool: pool, logger: logger, where: where, target: target, secret: secret,
		prepares: cfg.ConnConfig.DefaultQueryExecMode == pgx.QueryExecModeCacheStatement}
	db.appends, db.replies = newGroupCommit(db.groupFailed("appends")), newGroupCommit(db.groupFailed("replies"))
	db.usage, db.finishes = newGroupCommit(db.groupFailed("usage")), newGroupCommit(db.groupFailed("finishes"))
	pingCtx, cancel := context.WithTimeout(ctx, openTimeout)
	defer cancel()
	if err := db.pool.Ping(pingCtx); err != nil {
		logger.Warn("postgres not reachable yet; will keep trying",
			"err", redact.Error(fmt.Errorf("connect to postgres at %s: %w%s", where, err, target.hint(err)), secret))
		return db, nil
	}
	logger.Debug("postgres connected", "server", where, "database", cfg.ConnConfig.Database)
	return db, nil
}

// Close ends the lock session, if any, and closes every connection of the
// pool.
func (db *DB) Close() {
	db.closeLocks()
	db.pool.Close()
}

// Ping checks that the server answers.
func (db *DB) Ping(ctx context.Context) error {
	if err := db.pool.Ping(ctx); err != nil {
		return redact.Error(fmt.Errorf("postgres at %s: %w%s", db.where, err, db.target.hint(err)), db.secret)
	}
	return nil
}

// Autovacuum reports whether the server runs autovacuum. Without it the
// outbox and sessions, updated for every message, keep every dead row
// version, and each message costs the server more than the one before.
func (db *DB) Autovacuum(ctx context.Context) (bool, error) {
	var on bool
	if err := db.pool.QueryRow(ctx, `SELECT current_setting('autovacuum')::bool`).Scan(&on); err != nil {
		return false, redact.Error(fmt.Errorf("postgres at %s: read the autovacuum setting: %w", db.where, err), db.secret)
	}
	return on, nil
}

// Pool returns the underlying pgx pool for packages that need raw access.
func (db *DB) Pool() *pgxpool.Pool { return db.pool }

// connTarget is the server, user and database a URL connects to.
type connTarget struct {
	host           string
	port           uint16
	user, database string
}

// hint says what to do about err, a failed connection to t: the server's
// own refusal names what is missing (SQLSTATE 3D000 for the database,
// 28000 "role … does not exist" for the user), so the hint says how to
// create it; a failure without one is most likely a server that is not
// running.
func (t connTarget) hint(err error) string {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return "; is it running? check database.url"
	}
	const embedded = ", or leave database.url empty to use the embedded server"
	switch {
	case pe.Code == "3D000":
		return fmt.Sprintf("; create it as a PostgreSQL superuser: createdb %s -O %s %s (or CREATE DATABASE %s OWNER %s;)%s",
			t.connFlags(), shellWord(t.user), shellWord(t.database),
			pgx.Identifier{t.database}.Sanitize(), pgx.Identifier{t.user}.Sanitize(), embedded)
	case pe.Code == "28000" && strings.HasPrefix(pe.Message, "role ") && strings.HasSuffix(pe.Message, "does not exist"):
		return fmt.Sprintf("; create it as a PostgreSQL superuser: createuser %s --login --pwprompt %s (or CREATE ROLE %s LOGIN PASSWORD '…';)%s",
			t.connFlags(), shellWord(t.user), pgx.Identifier{t.user}.Sanitize(), embedded)
	case pe.Code == "28P01":
		return fmt.Sprintf("; the password for user %s in database.url is wrong", t.user)
	case pe.Code == "28000":
		return "; the server does not let this user in from here: allow it in the server's pg_hba.conf, or change database.url"
	}
	return "; check database.url"
}

// connFlags are the -h and -p flags of PostgreSQL's command-line tools for
// t's server.
func (t connTarget) connFlags() string {
	host := t.host
	if host == "" {
		host = "localhost"
	}
	return fmt.Sprintf("-h %s -p %d", shellWord(host), t.port)
}

// shellWord is s as one word of a shell command: as is when it holds
// nothing the shell treats specially, else quoted.
func shellWord(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.,:/@%+=-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// serverAddr renders host and port for messages; a socket directory is shown
// as is.
func serverAddr(host string, port uint16) string {
	if host == "" {
		host = "localhost"
	}
	if host[0] == '/' {
		return host + " (port " + strconv.Itoa(int(port)) + ")"
	}
	return net.JoinHostPort(host, strconv.Itoa(int(port)))
}

// once returns args for a query a process runs once, at start: in pgx's
// default mode, with the exec mode put first, which parses, binds and runs
// the query in one round trip instead of preparing it first and keeping the
// statement cached for the life of the connection. Another mode the URL
// picks (default_query_exec_mode, e.g. behind PgBouncer) is kept.
func (db *DB) once(args ...any) []any {
	if !db.prepares {
		return args
	}
	return append([]any{pgx.QueryExecModeExec}, args...)
}

// sizeStatementCaches sizes pgx's per-connection caches for the queries'
// mode, pgx's default (prepared statements, cached per connection), unless
// the URL picks another mode (default_query_exec_mode=cache_describe, e.g.
// behind PgBouncer) or sizes a cache itself. pgx makes both caches for
// every connection with room for 512 entries (about 27 KB each): the
// statement cache gets room for statementCacheSize, and the description
// cache, which this mode never reads, none.
func sizeStatementCaches(cc *pgx.ConnConfig, url string) {
	if cc.DefaultQueryExecMode != pgx.QueryExecModeCacheStatement {
		return
	}
	if !strings.Contains(url, "description_cache_capacity") {
		cc.DescriptionCacheCapacity = 0
	}
	if !strings.Contains(url, "statement_cache_capacity") {
		cc.StatementCacheCapacity = statementCacheSize
	}
}
