package postgres

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationLockID is the advisory lock replicas take while migrating; an
// arbitrary fixed id distinct from goose's default, so other goose users of the
// same server never block switchboard or the other way round.
const migrationLockID int64 = 0x5b0a_4d1c

// Migrate brings the schema up to date: goose reads the embedded files
// (migrations/NNNNN_name.sql, "-- +goose Up" sections, StatementBegin/End
// blocks and NO TRANSACTION files as goose documents them) and records
// each version in its goose_db_version table. Several replicas may call it
// at once: a PostgreSQL advisory lock lets one migrate while the others
// wait (up to five minutes) and then find nothing left to do.
func Migrate(ctx context.Context, db *DB) error {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	provider, err := newMigrationProvider(db, files)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if ok, err := db.schemaUpToDate(ctx, provider.ListSources()); err == nil && ok {
		// One query instead of taking goose's lock: the common start of a
		// replica whose schema is up to date.
		return provider.Close()
	}
	results, err := provider.Up(ctx)
	closeErr := provider.Close()
	if err != nil {
		return fmt.Errorf("migrate postgres at %s: %w; the schema is unchanged from the last successful migration, fix the cause and run `switchboard migrate` again", db.where, err)
	}
	if closeErr != nil {
		return fmt.Errorf("migrate: close: %w", closeErr)
	}
	for _, r := range results {
		if r.Source != nil {
			db.logger.Info("migration applied", "version", r.Source.Version, "duration", r.Duration)
		}
	}
	return nil
}

// newMigrationProvider returns a goose provider of the migrations in files
// for db, holding migrationLockID while it migrates; close it when done.
func newMigrationProvider(db *DB, files fs.FS) (*goose.Provider, error) {
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(migrationLockID),
		lock.WithLockTimeout(1, 300),
		lock.WithUnlockTimeout(1, 60),
	)
	if err != nil {
		return nil, err
	}
	// goose holds its lock on one connection for the whole run and runs a
	// NO TRANSACTION migration on another, which a pool of one connection
	// never has free: then the migrations get connections of their own.
	// Otherwise they use the pool's, which the daemon keeps using after.
	var sqlDB *sql.DB
	if cfg := db.pool.Config(); cfg.MaxConns < 2 {
		sqlDB = stdlib.OpenDB(*cfg.ConnConfig)
	} else {
		sqlDB = stdlib.OpenDBFromPool(db.pool)
	}
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, files,
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
		goose.WithSlog(db.logger),
	)
	if err != nil {
		_ = sqlDB.Close()
		return nil, err
	}
	return provider, nil
}

// schemaUpToDate reports whether every migration in sources is applied,
// in one query of goose's version table (switchboard only migrates up). An
// error (no table yet: a new database) means "let goose decide".
func (db *DB) schemaUpToDate(ctx context.Context, sources []*goose.Source) (bool, error) {
	want := make([]int64, len(sources))
	for i, s := range sources {
		want[i] = s.Version
	}
	var applied int
	err := db.pool.QueryRow(ctx, `SELECT count(DISTINCT version_id) FROM goose_db_version
		WHERE is_applied AND version_id = ANY($1)`, db.once(want)...).Scan(&applied)
	if err != nil {
		return false, err
	}
	return applied == len(want), nil
}
