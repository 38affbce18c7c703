package main

import (
	"context"
	"fmt"
	"io"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/console"
)

// chat runs the same pipeline with only the terminal as channel. The
// operator at the terminal is console:local and is always allowed.
func chat(ctx context.Context, cfgFile string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(cfgFile)
	if err != nil {
		return err
	}
	if cfg.Log.Level == "info" {
		cfg.Log.Level = "warn" // keep the conversation readable
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	con := console.New(console.Options{In: stdin, Out: stdout, OnEOF: cancel})
	d, err := newDaemon(ctx, cfg, daemonOptions{
		logOut: stderr,
		only:   []channels.Channel{con},
		allow:  []string{channels.Identity(console.Platform, "local")},
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "switchboard chat — type a message, Ctrl-D to quit.")
	return d.run(ctx, "")
}
