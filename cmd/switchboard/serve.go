package main

import (
	"context"
	"io"
)

// serve runs the daemon with the configured channels.
func serve(ctx context.Context, cfgFile string, logOut io.Writer) error {
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
