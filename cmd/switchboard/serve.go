package main

import (
	"context"
	"io"
	"os"
	"runtime/debug"
)

// serve runs the daemon with the configured channels.
func serve(ctx context.Context, cfgFile string, logOut io.Writer) error {
	if p, ok := gcPercent(os.Getenv); ok {
		debug.SetGCPercent(p)
	}
	cfg, err := loadConfig(cfgFile)
	if err != nil {
		return err
	}
	d, err := newDaemon(ctx, cfg, daemonOptions{logOut: logOut})
	if err != nil {
		return err
	}
	return d.run(ctx, cfg.HTTP.Listen)
}
