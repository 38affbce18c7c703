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

// Migrate brings the schema up to date. Several replicas may call it at once:
// a PostgreSQL advisory lock lets one migrate while the others wait (up to
// five minutes) and then find nothing left to do.
func Migrate(ctx context.Context, db *DB) error {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	if ok, err := db.schemaUpToDate(ctx, files); err == nil && ok {
		// One query instead of goose reading and parsing every file and
		// taking its lock: the common start of an up-to-date replica.
		return nil
	}
	locker, err := lock.NewPostgresSessionLocker(
		lock.WithLockID(migrationLockID),
		lock.WithLockTimeout(1, 300),
		lock.WithUnlockTimeout(1, 60),
	)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	migrations, err := readMigrations(files)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	ms := make([]*goose.Migration, len(migrations))
	for i, m := range migrations {
		ms[i] = m.gooseMigration()
	}
	// goose holds its lock on one connection for the whole run and runs a
	// NO TRANSACTION migration on another, which a pool of one connection
	// never has free: then the migrations get connections of their own.
	// Otherwise they use the pool's, which the daemon keeps using after
	// (new ones cost a server process each: ~0.1 s more to ready on a slow
	// guest, docs/benchmarks.md, twenty-sixth round).
	var sqlDB *sql.DB
	if cfg := db.pool.Config(); cfg.MaxConns < 2 {
		sqlDB = stdlib.OpenDB(*cfg.ConnConfig)
	} else {
		sqlDB = stdlib.OpenDBFromPool(db.pool)
	}
	// No file system: goose runs the files as read by readMigrations
	// (migration_files.go says why).
	provider, err := goose.NewProvider(goose.DialectPostgres, sqlDB, nil,
		goose.WithGoMigrations(ms...),
		goose.WithSessionLocker(locker),
		goose.WithDisableGlobalRegistry(true),
		goose.WithSlog(db.logger),
	)
	if err != nil {
		_ = sqlDB.Close()
		return fmt.Errorf("migrate: %w", err)
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

// schemaUpToDate reports whether every migration in files is applied, in
// one query of goose's version table (switchboard only migrates up). An
// error (no table yet: a new database) means "let goose decide".
func (db *DB) schemaUpToDate(ctx context.Context, files fs.FS) (bool, error) {
	want, err := migrationVersions(files)
	if err != nil {
		return false, err
	}
	var applied int
	err = db.pool.QueryRow(ctx, `SELECT count(DISTINCT version_id) FROM goose_db_version
		WHERE is_applied AND version_id = ANY($1)`, db.once(want)...).Scan(&applied)
	if err != nil {
		return false, err
	}
	return applied == len(want), nil
}
