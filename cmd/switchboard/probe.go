package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// healthcheckTimeout bounds one readiness probe.
const healthcheckTimeout = 5 * time.Second

// healthcheck asks a running daemon's /readyz (at http.listen from the
// config, or url) and reports in one line. It returns nil when the daemon
// is ready: the exit code is what container health checks read.
func healthcheck(ctx context.Context, cfgFile, url string, stdout io.Writer) error {
	if url == "" {
		cfg, err := loadConfig(cfgFile)
		if err != nil {
			return err
		}
		url = "http://" + probeAddr(cfg.HTTP.Listen) + "/readyz"
	}
	ctx, cancel := context.WithTimeout(ctx, healthcheckTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("%w: --url %q: %v", errUsage, url, err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("not ready: %s does not answer (is switchboard serve running?): %w", url, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		fmt.Fprintln(stdout, "ready")
		return nil
	}
	var r struct {
		NotReady map[string]string `json:"not_ready"`
	}
	if json.Unmarshal(body, &r) == nil && len(r.NotReady) > 0 {
		var parts []string
		for name, why := range r.NotReady {
			parts = append(parts, name+": "+why)
		}
		return fmt.Errorf("not ready: %s", strings.Join(parts, "; "))
	}
	return fmt.Errorf("not ready: %s answered HTTP %d", url, resp.StatusCode)
}

// probeAddr turns a listen address into one to connect to: a wildcard
// host (":8080", "0.0.0.0:8080", "[::]:8080") becomes loopback.
func probeAddr(listen string) string {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return listen
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}

// healthcheckCmd parses healthcheck's flags.
func healthcheckCmd(ctx context.Context, args []string, cfgFile string, stdout, stderr io.Writer) error {
	fs := newFlags("healthcheck", "switchboard healthcheck [--config FILE] [--url URL]   exit 0 when the daemon's /readyz says ready", stdout, stderr)
	fs.StringVar(&cfgFile, "config", cfgFile, "YAML config file (default ./switchboard.yaml if present)")
	url := fs.String("url", "", "readiness URL (default http://<http.listen>/readyz)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	return healthcheck(ctx, cfgFile, *url, stdout)
}

// errHelp ends a command that printed its help: exit 0.
var errHelp = errors.New("help printed")

// newFlags returns a flag set for command name, whose usage is line. It
// prints nothing itself: parseFlags reports problems, and --help prints
// the usage to stdout.
func newFlags(name, line string, stdout, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(stdout, "Usage:\n  %s\n\nFlags:\n", line)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

// parseFlags parses args. -h/--help prints the usage and returns errHelp;
// other problems return errUsage; no positional arguments are accepted.
func parseFlags(fs *flag.FlagSet, args []string) error {
	usage := fs.Usage
	fs.Usage = func() {} // the flag package calls it on every error
	defer func() { fs.Usage = usage }()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			usage()
			return errHelp
		}
		return fmt.Errorf("%w: %v (see switchboard %s --help)", errUsage, err, fs.Name())
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected arguments %q (see switchboard %s --help)", errUsage, fs.Args(), fs.Name())
	}
	return nil
}
