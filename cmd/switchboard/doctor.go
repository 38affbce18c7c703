package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/embedded"
	"github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// doctorCheck is one line of the doctor's report.
type doctorCheck struct {
	name string
	run  func(ctx context.Context) (detail string, err error)
	// timeout bounds run; zero means 10 s.
	timeout time.Duration
}

// doctor explains what is wrong with a setup, one line per dependency, on
// out, and fails (exit 1) when anything is; log lines go to logOut.
func doctor(ctx context.Context, cfgFile string, out, logOut io.Writer) error {
	// The same checks as serve: what doctor passes, serve accepts.
	cfg, err := loadConfig(cfgFile)
	if err != nil {
		fmt.Fprintf(out, "FAIL config\n%s\n", indent(strings.TrimPrefix(strings.TrimPrefix(err.Error(), errConfig.Error()), ":")))
		return fmt.Errorf("%w; fix the lines above", errConfig)
	}
	fmt.Fprintln(out, "ok   config")
	for _, w := range cfg.EnvWarnings() {
		fmt.Fprintf(out, "WARN env: %s\n", w)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(out, "WARN config: %s\n", w)
	}
	scrub := newScrubber(cfg)
	// What the libraries log themselves (go-redis's failed dials) goes
	// through the one logger, at debug level, not onto the report.
	redis.RouteLibraryLogs(newLogger(logOut, cfg.Log.Level, cfg.Log.Format, scrub))
	failed := 0
	for _, c := range doctorChecks(cfg) {
		timeout := c.timeout
		if timeout == 0 {
			timeout = 10 * time.Second
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		detail, err := c.run(cctx)
		cancel()
		var warn doctorWarning
		if errors.As(err, &warn) {
			fmt.Fprintf(out, "WARN %s: %s\n", c.name, scrub.Scrub(warn.Error()))
			continue
		}
		if err != nil {
			failed++
			fmt.Fprintf(out, "FAIL %s: %s\n", c.name, scrub.Scrub(err.Error()))
			continue
		}
		fmt.Fprintf(out, "ok   %s: %s\n", c.name, scrub.Scrub(detail))
	}
	if failed > 0 {
		return fmt.Errorf("%d check(s) failed; see the lines above", failed)
	}
	fmt.Fprintln(out, "all checks passed")
	return nil
}

// doctorWarning is a finding that does not stop serve but deserves a look.
type doctorWarning string

func (w doctorWarning) Error() string { return string(w) }

// checkSandbox says which exec sandbox serve would use.
func checkSandbox(cfg *config.Config) (string, error) {
	var runAs *exec.ExecUser
	if os.Geteuid() == 0 {
		u, err := exec.LookupExecUser(cmp.Or(cfg.Exec.User, defaultExecUser))
		if err != nil {
			return "", err
		}
		runAs = u
	}
	sb, why, err := exec.FindSandbox(cfg.Exec.Sandbox, cfg.Exec.Network, runAs)
	switch {
	case err != nil:
		return "", err
	case sb == nil && cfg.Exec.Sandbox == exec.SandboxNone:
		return "none (exec.sandbox: none): commands can read and write whatever their user can", nil
	case sb == nil:
		return "", doctorWarning("exec would run WITHOUT a sandbox: " + why + "; or set exec.sandbox: none to say this is intended")
	}
	return sb.Describe(), nil
}

// checkMCP connects to one MCP server and lists its tools.
func checkMCP(ctx context.Context, s config.MCPServer) (string, error) {
	reg := tools.NewRegistry(tools.RegistryOptions{})
	b := mcp.New(mcp.Options{Registry: reg, Timeout: 15 * time.Second})
	defer b.Close()
	b.Add(mcpServer(s))
	for {
		st := b.Statuses()
		if len(st) == 1 && st[0].Up {
			res := ""
			if st[0].Resources {
				res = " and its resources"
			}
			return fmt.Sprintf("%s server answered; %d tools%s bridged", s.Transport, st[0].Tools, res), nil
		}
		if len(st) == 1 && st[0].LastError != "" {
			return "", fmt.Errorf("%s (check mcp.servers[].command or url)", st[0].LastError)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("no answer within 30s")
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSpace(s), "\n", "\n  ")
}

func doctorChecks(cfg *config.Config) []doctorCheck {
	// cluster is where the postgres check found the embedded cluster; the
	// checks run in order, so the state check after it reads it.
	var cluster string
	checks := []doctorCheck{
		// Starting the embedded server may first initialise its cluster.
		{name: "postgres", run: func(ctx context.Context) (string, error) { return checkPostgres(ctx, cfg, &cluster) }, timeout: 2 * time.Minute},
		{name: "state", run: func(ctx context.Context) (string, error) { return checkState(cfg, cluster) }},
		{name: "redis", run: func(ctx context.Context) (string, error) { return checkRedis(ctx, cfg) }},
	}
	checks = append(checks, llmChecks(cfg)...)
	checks = append(checks, doctorCheck{name: "sandbox", run: func(ctx context.Context) (string, error) { return checkSandbox(cfg) }})
	checks = append(checks, doctorCheck{name: "skills", run: func(context.Context) (string, error) { return checkSkills(cfg) }})
	for _, srv := range cfg.MCP.Servers {
		checks = append(checks, doctorCheck{name: "mcp " + srv.Name, timeout: 30 * time.Second,
			run: func(ctx context.Context) (string, error) { return checkMCP(ctx, srv) }})
	}
	if cfg.Telegram.Token != "" {
		checks = append(checks, doctorCheck{name: "telegram", run: func(ctx context.Context) (string, error) { return checkTelegram(ctx, cfg) }})
	}
	if cfg.Slack.BotToken != "" {
		checks = append(checks, doctorCheck{name: "slack", run: func(ctx context.Context) (string, error) {
			ch, err := slack.New(slack.Options{BotToken: cfg.Slack.BotToken, AppToken: cfg.Slack.AppToken,
				SigningSecret: cfg.Slack.SigningSecret, APIURL: cfg.Slack.APIURL})
			if err != nil {
				return "", err
			}
			return ch.Check(ctx)
		}})
	}
	if cfg.Discord.Token != "" {
		checks = append(checks, doctorCheck{name: "discord", run: func(ctx context.Context) (string, error) {
			ch, err := discord.New(discord.Options{Token: cfg.Discord.Token, APIURL: cfg.Discord.APIURL})
			if err != nil {
				return "", err
			}
			return ch.Check(ctx)
		}})
	}
	if cfg.Telegram.Token == "" && cfg.Slack.BotToken == "" && cfg.Discord.Token == "" {
		checks = append(checks, doctorCheck{name: "platform", run: func(context.Context) (string, error) {
			return "", doctorWarning(noPlatformAdvice)
		}})
	}
	return checks
}

// noPlatformAdvice is what serve and doctor say when no chat platform is
// configured.
const noPlatformAdvice = "no chat platform configured, so no one can reach the agent; set telegram.token (SWITCHBOARD_TELEGRAM_TOKEN), " +
	"slack.bot_token and slack.app_token, or discord.token, or try the agent in this terminal with `switchboard chat`"

// checkPostgres connects to database.url or, without one, really starts
// the embedded server (or joins the one a running serve owns, leaving it
// running), sets *cluster to its cluster's directory and connects to it.
func checkPostgres(ctx context.Context, cfg *config.Config, cluster *string) (string, error) {
	dbURL, detail := cfg.Database.URL, "connected"
	if dbURL == "" {
		dir, err := ensureDataDir(cfg)
		if err != nil {
			return "", err
		}
		emb, err := embedded.Start(ctx, embedded.Options{DataDir: dir})
		if err != nil {
			return "", err
		}
		defer func() { _ = emb.Stop(ctx) }()
		*cluster = emb.ClusterDir()
		dbURL = emb.URL()
		detail = "embedded (no database.url): started and answered; cluster in " + emb.ClusterDir()
	}
	db, err := postgres.Open(ctx, dbURL, postgres.Options{})
	if err != nil {
		return "", err
	}
	defer db.Close()
	if err := db.Ping(ctx); err != nil {
		return "", err
	}
	if on, err := db.Autovacuum(ctx); err != nil {
		return "", err
	} else if !on {
		return "", doctorWarning(detail + ", but autovacuum is off: the outbox and sessions tables, updated for every message, " +
			"then keep every dead row and each message costs the server more; set autovacuum = on in postgresql.conf " +
			"(or run VACUUM ANALYZE regularly)")
	}
	return detail, nil
}

func checkRedis(ctx context.Context, cfg *config.Config) (string, error) {
	if cfg.Redis.URL == "" {
		return "in-process (no redis.url): single replica only, not durable", nil
	}
	if err := redis.Probe(ctx, cfg.Redis.URL); err != nil {
		return "", err
	}
	return "connected", nil
}

func checkTelegram(ctx context.Context, cfg *config.Config) (string, error) {
	var me struct {
		Username string `json:"username"`
	}
	if err := telegramCall(ctx, cfg, "getMe", &me); err != nil {
		return "", err
	}
	hook, err := telegramWebhookStatus(ctx, cfg)
	if err != nil {
		return "", err
	}
	return "bot @" + me.Username + "; " + hook, nil
}

// telegramCall calls a Bot API method without parameters and decodes its
// result into result; its errors say what to check.
func telegramCall(ctx context.Context, cfg *config.Config, method string, result any) error {
	url := strings.TrimRight(cfg.Telegram.APIURL, "/") + "/bot" + cfg.Telegram.Token + "/" + method
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("telegram.api_url: %w", err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("cannot reach the Telegram Bot API at %s: %w", cfg.Telegram.APIURL, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body := struct {
		OK          bool   `json:"ok"`
		Description string `json:"description"`
		Result      any    `json:"result"`
	}{Result: result}
	_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&body)
	if resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusNotFound {
		return errors.New("Telegram rejected the token: check telegram.token (from @BotFather)")
	}
	if !body.OK {
		return fmt.Errorf("%s failed: HTTP %d %s", method, resp.StatusCode, body.Description)
	}
	return nil
}

// telegramWebhookStatus asks getWebhookInfo and says whether what Telegram
// does matches telegram.mode: in webhook mode, whether the webhook points at
// telegram.webhook_url and whether Telegram's last delivery failed.
func telegramWebhookStatus(ctx context.Context, cfg *config.Config) (string, error) {
	var w struct {
		URL              string `json:"url"`
		Pending          int    `json:"pending_update_count"`
		LastErrorDate    int64  `json:"last_error_date"`
		LastErrorMessage string `json:"last_error_message"`
	}
	if err := telegramCall(ctx, cfg, "getWebhookInfo", &w); err != nil {
		return "", err
	}
	if cfg.Telegram.Mode != "webhook" {
		if w.URL != "" {
			return fmt.Sprintf("polling (a webhook to %s is set: serve removes it, keeping the %d pending updates)", w.URL, w.Pending), nil
		}
		return "polling", nil
	}
	switch {
	case w.URL == "":
		return fmt.Sprintf("webhook mode, not registered yet (serve registers %s; %d updates wait)", cfg.Telegram.WebhookURL, w.Pending), nil
	case w.URL != cfg.Telegram.WebhookURL:
		return "", fmt.Errorf("Telegram posts updates to %s, not to telegram.webhook_url %s; serve registers the configured URL when it starts", w.URL, cfg.Telegram.WebhookURL)
	case w.LastErrorMessage != "" && time.Since(time.Unix(w.LastErrorDate, 0)) < time.Hour:
		return "", fmt.Errorf("Telegram's last delivery to %s failed %s ago: %s; check that the URL reaches a replica's /webhooks/telegram and that telegram.webhook_secret is the same everywhere (%d updates wait)",
			w.URL, time.Since(time.Unix(w.LastErrorDate, 0)).Round(time.Second), w.LastErrorMessage, w.Pending)
	}
	return fmt.Sprintf("webhook to %s, %d updates waiting", w.URL, w.Pending), nil
}
