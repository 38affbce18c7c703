package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/console"
	"github.com/switchboard-chat/switchboard/config"
)

// chat runs the same pipeline with only the terminal as channel. The
// operator at the terminal is console:local: always allowed, and an admin
// and approver, since whoever runs chat already holds the config and the
// database. Approval and access requests come to the terminal as numbered
// choices.
func chat(ctx context.Context, cfgFile string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(cfgFile)
	if err != nil {
		return err
	}
	if cfg.Log.Level == "info" {
		cfg.Log.Level = "warn" // keep the conversation readable
	}
	operator := channels.Identity(console.Platform, console.UserID)
	consoleDecides(cfg, operator)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	con := console.New(console.Options{In: stdin, Out: stdout, Color: colorTerminal(stdout), OnEOF: cancel})
	d, err := newDaemon(ctx, cfg, daemonOptions{
		logOut: con.LogWriter(stderr),
		only:   []channels.Channel{con},
		allow:  []string{operator},
	})
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, "switchboard chat — type a message, Ctrl-D to quit. Requests for a decision show numbered choices: type the number.")
	return d.run(ctx, "")
}

// consoleDecides makes operator an admin and an approver, and sends
// approval and access requests to the console: the configured approvals
// chat is on a platform that chat does not connect to, where nobody could
// press anything.
func consoleDecides(cfg *config.Config, operator string) {
	if !slices.Contains(cfg.Admins, operator) {
		cfg.Admins = append(cfg.Admins, operator)
	}
	if !slices.Contains(cfg.Approvals.Approvers, operator) {
		cfg.Approvals.Approvers = append(cfg.Approvals.Approvers, operator)
	}
	cfg.Approvals.Chat = console.Address().String()
}

// colorTerminal reports whether w is a terminal that may get ANSI styles
// (NO_COLOR unset, TERM not "dumb").
func colorTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
