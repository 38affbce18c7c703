// Command switchboard is the daemon that puts LLM agents into team chats.
// It wires the packages together: config, storage, channels, agents, bot.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
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
  switchboard healthcheck [--url URL]   exit 0 when the running daemon is ready (/readyz)
  switchboard secrets rotate --new-key-file FILE   re-encrypt stored secrets with a new key
  switchboard version                   print the version

--config FILE may also come before the command: switchboard --config FILE serve.
Every command takes --help.

Configuration: ./switchboard.yaml (or --config FILE) and SWITCHBOARD_* environment
variables; see README.md.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run executes one command and returns the process exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	cfgFile, args, err := globalConfig(args)
	if err != nil {
		fmt.Fprintf(stderr, "switchboard: %v\n\n%s", err, usage)
		return exitUsage
	}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd, rest := args[0], args[1:]
	with := func(line string, f func(cfgFile string) error) error {
		return withConfig(cmd, line, rest, cfgFile, stdout, stderr, f)
	}
	switch cmd {
	case "serve":
		err = with("switchboard serve [--config FILE]   run the daemon", func(cfgFile string) error { return serve(ctx, cfgFile, stderr) })
	case "chat":
		err = with("switchboard chat [--config FILE]   talk to the agent in this terminal", func(cfgFile string) error { return chat(ctx, cfgFile, stdin, stdout, stderr) })
	case "migrate":
		err = with("switchboard migrate [--config FILE]   apply database migrations and exit", func(cfgFile string) error { return migrate(ctx, cfgFile, stdout, stderr) })
	case "doctor":
		err = with("switchboard doctor [--config FILE]   check the setup", func(cfgFile string) error { return doctor(ctx, cfgFile, stdout, stderr) })
	case "healthcheck":
		err = healthcheckCmd(ctx, rest, cfgFile, stdout, stderr)
	case "secrets":
		err = secretsCmd(ctx, rest, cfgFile, stdout, stderr)
	case "version", "--version", "-v":
		fmt.Fprintln(stdout, "switchboard", buildVersion())
		return 0
	case "help", "--help", "-h":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "switchboard: unknown command %q\n\n%s", cmd, usage)
		return exitUsage
	}
	switch {
	case err == nil, errors.Is(err, errHelp):
		return 0
	case errors.Is(err, errUsage), errors.Is(err, errConfig):
		fmt.Fprintln(stderr, "switchboard:", err)
		return exitUsage
	default:
		fmt.Fprintln(stderr, "switchboard:", err)
		return exitFailure
	}
}

// globalConfig takes a --config FILE (or --config=FILE) given before the
// command off args.
func globalConfig(args []string) (cfgFile string, rest []string, err error) {
	for len(args) > 0 {
		switch a := args[0]; {
		case a == "--config" || a == "-config":
			if len(args) < 2 {
				return "", nil, errors.New("--config needs a file")
			}
			cfgFile, args = args[1], args[2:]
		case strings.HasPrefix(a, "--config=") || strings.HasPrefix(a, "-config="):
			_, cfgFile, _ = strings.Cut(a, "=")
			args = args[1:]
		default:
			return cfgFile, args, nil
		}
	}
	return cfgFile, args, nil
}

// buildVersion is the -ldflags version, else the module version and VCS
// revision the binary was built from.
func buildVersion() string {
	if version != "dev" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return version
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" {
		v = "dev"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if rev != "" && v == "dev" {
		v += " (" + rev[:min(12, len(rev))] + modified + ")"
	}
	return v
}

// withConfig parses the flags of a command that takes only --config
// (cfgFile from before the command is its default) and runs f.
func withConfig(name, line string, args []string, cfgFile string, stdout, stderr io.Writer, f func(cfgFile string) error) error {
	fs := newFlags(name, line, stdout, stderr)
	fs.StringVar(&cfgFile, "config", cfgFile, "YAML config file (default ./switchboard.yaml if present)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return f(cfgFile)
}
