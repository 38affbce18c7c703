package main

import (
	"context"
	"fmt"
	"io"

	"github.com/switchboard-chat/switchboard/config"

	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// migrate applies the database migrations and exits.
func migrate(ctx context.Context, cfgFile string, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(cfgFile)
	if err != nil {
		return err
	}
	st, err := openMigrated(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer st.close(ctx)
	fmt.Fprintln(stdout, "database schema is up to date")
	return nil
}

// openMigrated opens PostgreSQL for a one-off command and brings its
// schema up to date; close the stores when done.
func openMigrated(ctx context.Context, cfg *config.Config, stderr io.Writer) (*stores, error) {
	scrub := newScrubber(cfg)
	log := newLogger(stderr, cfg.Log.Level, cfg.Log.Format, scrub)
	st, err := openPostgres(ctx, cfg, log)
	if err != nil {
		return nil, err
	}
	if err := postgres.Migrate(ctx, st.db); err != nil {
		st.close(ctx)
		return nil, fmt.Errorf("migrate: %s", scrub.Scrub(err.Error()))
	}
	return st, nil
}
