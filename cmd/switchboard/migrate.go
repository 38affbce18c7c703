package main

import (
	"context"
	"fmt"
	"io"

	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// migrate applies the database migrations and exits.
func migrate(ctx context.Context, cfgFile string, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(cfgFile)
	if err != nil {
		return err
	}
	scrub := newScrubber(cfg)
	log := newLogger(stderr, cfg.Log.Level, cfg.Log.Format, scrub)
	st, err := openPostgres(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer st.close(ctx)
	if err := postgres.Migrate(ctx, st.db); err != nil {
		return fmt.Errorf("migrate: %s", scrub.Scrub(err.Error()))
	}
	fmt.Fprintln(stdout, "database schema is up to date")
	return nil
}
