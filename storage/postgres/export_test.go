package postgres

import (
	"context"
	"io/fs"
	"time"

	"github.com/pressly/goose/v3"
)

// SchemaUpToDate exposes the migration fast path's check.
func (db *DB) SchemaUpToDate(ctx context.Context) (bool, error) {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return false, err
	}
	provider, err := newMigrationProvider(db, files)
	if err != nil {
		return false, err
	}
	defer provider.Close()
	return db.schemaUpToDate(ctx, provider.ListSources())
}

// GooseUp runs goose's Up as Migrate does, without its fast path, and
// returns how many migrations it applied.
func GooseUp(ctx context.Context, db *DB) (int, error) {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return 0, err
	}
	provider, err := newMigrationProvider(db, files)
	if err != nil {
		return 0, err
	}
	defer provider.Close()
	results, err := provider.Up(ctx)
	return len(results), err
}

// MigrationSources lists the embedded migrations as goose reads them.
func MigrationSources(db *DB) ([]*goose.Source, error) {
	files, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	provider, err := newMigrationProvider(db, files)
	if err != nil {
		return nil, err
	}
	defer provider.Close()
	return provider.ListSources(), nil
}

// Listening reports whether the cache hears agent_docs' notices (and so
// keeps what it reads).
func (c *DocsCache) Listening() bool { return c.docs.isListening() }

// Listening reports whether the cache hears the skills tables' notices.
func (c *SkillsCache) Listening() bool { return c.published.isListening() && c.disabled.isListening() }

// GroupsWaiting reports how many Append, Insert and InsertReply calls wait
// for the group in flight.
func (db *DB) GroupsWaiting() (appends, replies int) {
	return db.appends.group.Waiting(), db.replies.group.Waiting()
}

// UsageWaiting reports how many InsertUsage calls wait for the group in
// flight.
func (db *DB) UsageWaiting() int { return db.usage.group.Waiting() }

// SetGroupLockTimeout sets how long a group waits for a row lock before
// its callers run alone (groupLockTimeout); call it before the first use.
func (db *DB) SetGroupLockTimeout(d time.Duration) {
	db.appends.lockTimeout, db.replies.lockTimeout = d, d
	db.usage.lockTimeout, db.finishes.lockTimeout = d, d
}
