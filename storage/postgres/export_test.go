package postgres

import (
	"context"
	"io/fs"
	"time"

	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// What the external tests share with the internal ones.
var (
	// ReachableTempDir is authTestDir: a data directory the embedded
	// server's user can reach.
	ReachableTempDir = authTestDir
	// StartForTest is startForTest.
	StartForTest = startForTest
)

// MigrateWithGooseParser applies the migrations the way goose does with its
// own SQL parser (the path Migrate replaced), for comparing the schemas.
func MigrateWithGooseParser(ctx context.Context, db *DB) error {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	sqlDB := stdlib.OpenDBFromPool(db.pool)
	defer sqlDB.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, sqlDB, files, goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return err
	}
	defer p.Close()
	_, err = p.Up(ctx)
	return err
}

// SchemaUpToDate exposes the migration fast path's check.
func (db *DB) SchemaUpToDate(ctx context.Context) (bool, error) {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return false, err
	}
	return db.schemaUpToDate(ctx, files)
}

// Listening reports whether the cache hears agent_docs' notices (and so
// keeps what it reads).
func (c *DocsCache) Listening() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.listening
}

// GroupsWaiting reports how many AppendWindow and InsertReply calls wait
// for the group in flight.
func (db *DB) GroupsWaiting() (appends, replies int) {
	return db.appends.group.Waiting(), db.replies.group.Waiting()
}

// SetGroupLockTimeout sets how long a group waits for a row lock before
// its callers run alone (groupLockTimeout); call it before the first use.
func (db *DB) SetGroupLockTimeout(d time.Duration) {
	db.appends.lockTimeout, db.replies.lockTimeout = d, d
}
