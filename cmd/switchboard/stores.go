package main

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/embedded"
	"github.com/switchboard-chat/switchboard/storage/redis"
)

// stores are the opened Postgres and Redis, embedded or external.
type stores struct {
	db          *postgres.DB
	docs        *postgres.DocsCache   // db's documents; reads from memory while it listens
	skills      *postgres.SkillsCache // db's skills; the lists from memory while it listens
	rdb         *redis.Store
	embeddedPG  *embedded.Server
	embeddedRDB *redis.Embedded
	log         *slog.Logger
	tracing     trace.TracerProvider // nil: queries and commands untraced
}

// openStores connects to Postgres and Redis, starting the embedded ones
// when no URL is configured. Connections are lazy: a server that is down
// now is retried later, and readiness says so meanwhile.
//
// The in-process Redis comes first: it cannot be shared, so a second
// process on the same data_dir (say chat while serve runs) stops there,
// before touching anything else.
func openStores(ctx context.Context, cfg *config.Config, log *slog.Logger, tracing trace.TracerProvider) (*stores, error) {
	s := &stores{log: log, tracing: tracing}
	rURL := cfg.Redis.URL
	if rURL == "" {
		dir, err := ensureDataDir(cfg)
		if err != nil {
			return nil, err
		}
		emb, err := redis.StartEmbeddedFor(redis.EmbeddedOptions{DataDir: dir, Logger: log})
		if err != nil {
			return nil, err
		}
		s.embeddedRDB = emb
		rURL = emb.URL()
	}
	// Both are connected at the same time: a first PostgreSQL connection
	// waits for the server to start a process for it, long enough for Redis's
	// to be made meanwhile.
	var rErr error
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		s.rdb, rErr = redis.Open(ctx, rURL, redis.Options{Prefix: cfg.Redis.Prefix, Logger: log, Tracing: tracing})
	}()
	dbErr := s.openDB(ctx, cfg)
	<-opened
	if err := errors.Join(dbErr, rErr); err != nil {
		s.close(ctx)
		return nil, err
	}
	return s, nil
}

// openPostgres opens only the database (migrate needs no Redis).
func openPostgres(ctx context.Context, cfg *config.Config, log *slog.Logger) (*stores, error) {
	s := &stores{log: log}
	if err := s.openDB(ctx, cfg); err != nil {
		s.close(ctx)
		return nil, err
	}
	return s, nil
}

// openDB opens database.url, or the embedded PostgreSQL of data_dir when it
// is unset. An embedded server another switchboard process runs is shared
// and left running when this one exits.
func (s *stores) openDB(ctx context.Context, cfg *config.Config) error {
	dbURL := cfg.Database.URL
	if dbURL == "" {
		dir, err := ensureDataDir(cfg)
		if err != nil {
			return err
		}
		s.log.Info("no database.url set: starting embedded PostgreSQL", "data_dir", dir)
		emb, err := embedded.Start(ctx, embedded.Options{DataDir: dir, Logger: s.log})
		if err != nil {
			return err
		}
		s.embeddedPG = emb
		dbURL = emb.URL()
	}
	db, err := postgres.Open(ctx, dbURL, postgres.Options{Logger: s.log, MaxConns: int32(cfg.Database.MaxConns), Tracing: s.tracing})
	if err != nil {
		return err
	}
	s.db = db
	s.docs = postgres.NewDocsCache(db)
	s.skills = postgres.NewSkillsCache(db)
	return nil
}

// ensureDataDir returns the absolute data_dir, creating it if needed.
func ensureDataDir(cfg *config.Config) (string, error) {
	dir, err := filepath.Abs(cfg.DataDir)
	if err != nil {
		return "", fmt.Errorf("data_dir %q: %w", cfg.DataDir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("create data_dir %s: %w (set data_dir to a writable folder)", dir, err)
	}
	return dir, nil
}

// close releases everything, stopping embedded servers last (an embedded
// PostgreSQL only if this process runs it).
func (s *stores) close(ctx context.Context) {
	if s.rdb != nil {
		_ = s.rdb.Close()
	}
	if s.db != nil {
		s.db.Close()
	}
	if s.embeddedRDB != nil {
		s.embeddedRDB.Close()
	}
	if s.embeddedPG != nil {
		if err := s.embeddedPG.Stop(context.WithoutCancel(ctx)); err != nil {
			s.log.Warn("stop embedded PostgreSQL", "err", err)
		}
	}
}
