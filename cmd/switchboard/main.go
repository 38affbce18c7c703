// Command switchboard is the daemon that puts LLM agents into team chats.
// It wires the packages together: config, storage, channels, agents, bot.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// Exit codes: 0 ok, 1 runtime failure, 2 bad usage or invalid config.
const (
	exitFailure = 1
	exitUsage   = 2
)

// errUsage marks errors that are the caller's to fix (exit 2).
var errUsage = errors.New("usage")

const usage = `switchboard — LLM agents in your team chats

Usage:
  switchboard serve   [--config FILE]   run the daemon (channels, scheduler, HTTP)
  switchboard chat    [--config FILE]   talk to the agent in this terminal
  switchboard migrate [--config FILE]   apply database migrations and exit
  switchboard doctor  [--config FILE]   check config, database, Redis, LLM and platforms
  switchboard version                   print the version

Configuration: ./switchboard.yaml (or --config FILE) and SWITCHBOARD_* environment
variables; see README.md.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, rest := args[0], args[1:]
	var err error
	switch cmd {
	case "serve":
		err = withConfig(rest, stderr, func(cfgFile string) error { return serve(ctx, cfgFile, stderr) })
	case "chat":
		err = withConfig(rest, stderr, func(cfgFile string) error { return chat(ctx, cfgFile, stdin, stdout, stderr) })
	case "migrate":
		err = withConfig(rest, stderr, func(cfgFile string) error { return migrate(ctx, cfgFile, stdout, stderr) })
	case "doctor":
		err = withConfig(rest, stderr, func(cfgFile string) error { return doctor(ctx, cfgFile, stdout) })
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "switchboard", version)
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errUsage), errors.Is(err, errConfig):
		fmt.Fprintln(stderr, "switchboard:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "switchboard:", err)
		return exitFailure
	}
}

// withConfig parses the --config flag shared by the commands.
func withConfig(args []string, stderr io.Writer, f func(cfgFile string) error) error {
	fs := flag.NewFlagSet("switchboard", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cfgFile := fs.String("config", "", "YAML config file (default ./switchboard.yaml if present)")
	if err := fs.Parse(args); err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q", errUsage, fs.Args())
	}
	return f(*cfgFile)
}
