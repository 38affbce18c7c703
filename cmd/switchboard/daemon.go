package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/VictoriaMetrics/metrics"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/bot/askuser"
	"github.com/switchboard-chat/switchboard/bot/budgets"
	"github.com/switchboard-chat/switchboard/bot/console"
	"github.com/switchboard-chat/switchboard/bot/customtools"
	"github.com/switchboard-chat/switchboard/bot/handoff"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/bot/knowledge"
	"github.com/switchboard-chat/switchboard/bot/leader"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/bot/modelswitch"
	"github.com/switchboard-chat/switchboard/bot/skills"
	"github.com/switchboard-chat/switchboard/bot/subagents"
	"github.com/switchboard-chat/switchboard/bot/teams"
	llmusage "github.com/switchboard-chat/switchboard/bot/usage"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/secretbox"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/mcp"
	"github.com/switchboard-chat/switchboard/tools/scrub"
)

// errConfig marks an invalid configuration (exit 2).
var errConfig = errors.New("invalid configuration")

// loadConfig reads and validates the configuration.
func loadConfig(file string) (*config.Config, error) {
	cfg, err := config.Load(config.LoadOptions{File: file})
	var problems config.Problems
	// Load's Problems come with a Config to validate, so one run lists
	// every problem.
	if err != nil && (cfg == nil || !errors.As(err, &problems)) {
		return nil, fmt.Errorf("%w: %v", errConfig, err)
	}
	if err := cfg.Validate(); err != nil {
		var p config.Problems
		if !errors.As(err, &p) {
			return nil, fmt.Errorf("%w:\n%v", errConfig, err)
		}
		problems = append(problems, p...)
	}
	problems = append(problems, policyProblems(cfg)...)
	if _, err := configJobs(cfg); err != nil {
		problems = append(problems, strings.Split(err.Error(), "\n")...)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("%w:\n%v", errConfig, problems)
	}
	return cfg, nil
}

// daemon is one wired switchboard process.
type daemon struct {
	chatModels *modelswitch.Switch // /model: the chats' chosen models
	cfg        *config.Config
	log        *slog.Logger
	scrubber   *scrub.Scrubber
	st         *stores
	metricSet  *metrics.Set
	metrics    *bot.Metrics
	channels   map[string]channels.Channel
	router     *bot.Router
	handoff    *handoff.Service
	teams      *teams.Service
	subagents  *subagents.Service
	disp       *bot.Dispatcher
	sched      *jobs.Scheduler
	live       *bot.Liveness // the heartbeat of what disp and sched hold
	// leaders hold the channels only one replica may receive on (Telegram
	// polling allows one poller per bot token).
	leaders map[string]*leader.Leader
	// compaction summarizes the turns the agents' windows leave out
	// (agent.compaction); shared by every agent.
	compaction *agentcore.Compactor
	// leaderTasks run on one replica at a time besides the channels
	// (registering Telegram's webhook).
	leaderTasks []leaderTask
	migrated    atomic.Bool
	readyAt     time.Time
	// execInfo says who exec commands run as and where (for /status).
	execInfo string
	// fallbacks are the providers with llm.fallbacks (for /status).
	fallbacks []modelFallbacks
	// mcp keeps the MCP servers connected and their tools registered.
	mcp *mcp.Bridge
	// tools is the registry every agent shares; exec runs custom tools;
	// customs keeps the custom tools added at run time.
	tools *tools.Registry
	exec  *exec.Exec
	// workspaces are the conversations' directories the fs tools use;
	// attachments are put in their inbox.
	workspaces exec.Workspaces
	// models are the media model services (media.*), built once in
	// newTools: the media tools and the receiver of attachments share them.
	models  mediaServices
	procs   *exec.Processes // background processes, killed on exit
	customs postgres.CustomTools
	mcpDB   postgres.MCPServers
	// customTools adds and removes the run-time custom tools, for /tools
	// and the admin API.
	customTools *customtools.Catalog
	// skills are the skills of skills.dirs and the published ones, for
	// the agents' prompts, their tools and /skills.
	skills *skills.Catalog
	// approvals decides risky tool calls (buttons, admin API); access
	// decides access and MCP grant requests.
	approvals *approvals.Service
	console   *console.Console // the admin console at /admin, and /login, /logout
	// agentTools are the agents' tools after policy, for the console.
	agentTools []agentTools
	access     *access.Service
	// questions asks people the agents' questions (ask_user).
	questions *askuser.Service
	// budgets checks the budgets before every model call.
	budgets *budgets.Guard
	// replica names this process among the replicas (config replica).
	replica string
	// tracing exports OpenTelemetry traces when OTEL_EXPORTER_OTLP_* asks.
	tracing *tracing
	// usage records every model call's tokens and cost; meter is what the
	// agents ask before and tell after each call (usage, then budgets).
	usage *llmusage.Recorder
	meter agentcore.Meters
	// knowledge extracts the knowledge graph of memory documents; nil when
	// knowledge.extract is off.
	knowledge *knowledge.Worker
}

// daemonOptions says what to run besides the configured platforms.
type daemonOptions struct {
	logOut io.Writer
	// only, when set, replaces the configured channels (switchboard chat).
	only []channels.Channel
	// allow adds identities allowed regardless of access mode.
	allow []string
}

// newDaemon wires everything from cfg; nothing runs until run is called.
func newDaemon(ctx context.Context, cfg *config.Config, o daemonOptions) (*daemon, error) {
	d := newDaemonLogged(cfg, o.logOut)
	box, err := secretbox.Load(cfg.SecretsKey.Key, cfg.SecretsKey.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("secrets key: %w", err)
	}
	if d.tracing, err = newTracing(ctx, d.replica, d.log); err != nil {
		return nil, err
	}
	st, err := openStores(ctx, cfg, d.log, d.tracing.tracerProvider())
	if err != nil {
		return nil, err
	}
	d.st = st
	d.customs = postgres.CustomTools{DB: st.db, Box: box}
	d.mcpDB = postgres.MCPServers{DB: st.db, Box: box}

	if o.only != nil {
		for _, ch := range o.only {
			d.channels[ch.Platform()] = ch
		}
	} else if err := d.openChannels(); err != nil {
		st.close(ctx)
		return nil, err
	}

	// owner names this process in leases and heartbeats: unique even when a
	// restarted container gets the same hostname and pid.
	owner := processOwner()
	d.wireDelivery(owner)
	d.wireUsage()
	if d.budgets, err = d.newBudgets(); err != nil {
		st.close(ctx)
		return nil, err
	}
	reg, err := d.newTools(d.approvals)
	if err != nil {
		st.close(ctx)
		return nil, err
	}
	agents, err := d.buildAgents(reg, d.approvals)
	if err != nil {
		st.close(ctx)
		return nil, err
	}
	if d.chatModels, err = d.newModelSwitch(); err != nil {
		st.close(ctx)
		return nil, err
	}
	d.router = d.newRouter(agents, o.allow)
	d.wireSubagents()
	if err := d.wireFeatures(o.allow, owner); err != nil {
		st.close(ctx)
		return nil, err
	}
	return d, nil
}

// newDaemonLogged makes the daemon with its scrubbing logger and metrics,
// and logs what the configuration warns about before anything can fail.
func newDaemonLogged(cfg *config.Config, logOut io.Writer) *daemon {
	scrubber := newScrubber(cfg)
	d := &daemon{
		cfg:       cfg,
		scrubber:  scrubber,
		log:       newLogger(logOut, cfg.Log.Level, cfg.Log.Format, scrubber),
		metricSet: metrics.NewSet(),
		channels:  map[string]channels.Channel{},
		leaders:   map[string]*leader.Leader{},
		replica:   replicaName(cfg.Replica),
	}
	if cfg.Replica != "" {
		d.log = d.log.With("replica", cfg.Replica)
	}
	redis.RouteLibraryLogs(d.log)
	for _, w := range append(cfg.EnvWarnings(), cfg.Warnings...) {
		d.log.Warn(w)
	}
	if w := modelWarning(cfg); w != "" {
		d.log.Warn(w) // serve and chat both start here: say it before the first message fails
	}
	d.metrics = bot.NewMetrics(d.metricSet)
	return d
}

// wireDelivery makes what delivers and decides on the stores and channels:
// the liveness heartbeat, the outbox dispatcher, approvals and handoffs.
func (d *daemon) wireDelivery(owner string) {
	st, cfg := d.st, d.cfg
	// One heartbeat for the outbox rows and job runs this process holds.
	d.live = bot.NewLiveness(bot.LivenessOptions{Store: st.db, Owner: owner, Logger: d.log})
	d.disp = bot.NewDispatcher(bot.DispatcherOptions{
		Outbox: st.db, Channels: d.channels, Owner: owner, Liveness: d.live, OpenFile: media.Opener(st.db),
		Metrics: d.metrics, Logger: d.log, Tracer: d.tracing.tracer(),
	})
	d.approvals = newApprovals(d)
	d.handoff = &handoff.Service{
		Routes:    handoff.NewRoutes(handoff.RoutesOptions{Cache: st.rdb, Store: st.db, TTL: cfg.Handoff.TTL, Logger: d.log}),
		Directory: bot.Directory{Default: cfg.Agent.Name, Names: cfg.AgentNames(), Bindings: bindingsOf(cfg)},
		History:   st.db, Outbox: st.db, Nudge: d.disp.Nudge, Logger: d.log,
	}
}

// newRouter makes the router every inbound message goes through; allow
// adds identities allowed regardless of access mode.
func (d *daemon) newRouter(agents builtAgents, allow []string) *bot.Router {
	st, cfg, scrubber := d.st, d.cfg, d.scrubber
	userRate, _ := rateOf(cfg.RateLimit.User)
	chatRate, _ := rateOf(cfg.RateLimit.Chat)
	return bot.NewRouter(bot.Options{
		Agent: agents.def, AgentName: cfg.Agent.Name,
		Agents: agents.named, Bindings: bindingsOf(cfg), AgentInfo: agents.info, Route: d.handoff,
		History: st.db, Outbox: st.db, Recovery: st.db, Identities: st.db,
		Dedupe: st.rdb, Notice: st.rdb, Limiter: st.rdb, Locker: st.rdb,
		Channels: d.channels,
		Access:   bot.AccessOptions{Mode: cfg.Access.Mode, Admins: cfg.Admins, Allow: append(cfg.Access.Allow, allow...)},
		Limits:   bot.Limits{User: userRate, Chat: chatRate},
		Metrics:  d.metrics, Logger: d.log, Dispatcher: d.disp, Models: d.chatModels,
		Status: func(ctx context.Context) []string {
			lines := append(append(bot.StatusLines(ctx, d.checks()), d.execInfo), d.mcpStatusLines(ctx)...)
			return append(lines, d.fallbackStatusLines()...)
		},
		Scrub:       scrubber.Scrub,
		Attachments: d.mediaReceiver(), Workspace: d.workspaces.For,
		Tracer: d.tracing.tracer(),
		Stream: cfg.Conversation.Stream, LiveStore: st.db,
		Stops: st.rdb, StopProcesses: d.procs.StopStartedSince,
	})
}

// openChannels creates the platform channels the config enables.
func (d *daemon) openChannels() error {
	if d.cfg.Telegram.Token != "" {
		opts := telegram.Options{Token: d.cfg.Telegram.Token, APIURL: d.cfg.Telegram.APIURL, Logger: d.log,
			RequireMention: d.cfg.Telegram.RequireMention}
		if d.cfg.Telegram.Mode == "webhook" {
			opts.Webhook = telegram.WebhookOptions{URL: d.cfg.Telegram.WebhookURL, Secret: d.cfg.Telegram.WebhookSecret}
			opts.Albums = d.st.db
		}
		tg, err := telegram.New(opts)
		if err != nil {
			return fmt.Errorf("telegram: %w", err)
		}
		d.channels[tg.Platform()] = tg
		if opts.Webhook.URL == "" {
			// One poller per bot token: the leader polls, every replica sends.
			d.leaders[tg.Platform()] = &leader.Leader{Lock: d.st.db, Key: "leader:telegram:poll", Logger: d.log}
		} else {
			// Every replica takes webhook requests; one registers the webhook.
			d.leaderTasks = append(d.leaderTasks, leaderTask{
				leader: &leader.Leader{Lock: d.st.db, Key: "leader:telegram:webhook", Logger: d.log},
				run:    holdAfter(tg.RegisterWebhook),
			})
		}
	}
	if d.cfg.Slack.BotToken != "" {
		sl, err := slack.New(slack.Options{
			BotToken: d.cfg.Slack.BotToken, AppToken: d.cfg.Slack.AppToken,
			SigningSecret: d.cfg.Slack.SigningSecret, APIURL: d.cfg.Slack.APIURL, Logger: d.log,
		})
		if err != nil {
			return fmt.Errorf("slack: %w", err)
		}
		d.channels[sl.Platform()] = sl
	}
	if d.cfg.Discord.Token != "" {
		dc, err := discord.New(discord.Options{Token: d.cfg.Discord.Token, APIURL: d.cfg.Discord.APIURL, Logger: d.log,
			Sessions: d.st.rdb})
		if err != nil {
			return fmt.Errorf("discord: %w", err)
		}
		d.channels[dc.Platform()] = dc
		// One gateway session per bot: the leader holds it, every replica
		// sends over REST; a new leader resumes the stored session.
		d.leaders[dc.Platform()] = &leader.Leader{Lock: d.st.db, Key: "leader:discord:gateway", Logger: d.log}
	}
	if len(d.channels) == 0 {
		d.log.Warn(noPlatformAdvice)
	}
	return nil
}

// nudge wakes the outbox dispatcher (set up after the tools).
func (d *daemon) nudge() {
	if d.disp != nil {
		d.disp.Nudge()
	}
}

// processOwner returns hostname-pid-random, this process's lease owner name.
func processOwner() string {
	hostname, _ := os.Hostname()
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%s", hostname, os.Getpid(), hex.EncodeToString(b[:]))
}

// newProvider picks the LLM provider from config, with bounded retries
// logged to log, and then the fallback models of llm.fallbacks.
func newProvider(llm config.LLM, log *slog.Logger) (agentcore.Provider, error) {
	var p agentcore.Provider
	switch llm.Provider {
	case "anthropic":
		p = agentcore.NewAnthropic(agentcore.AnthropicOptions{
			BaseURL: llm.BaseURL, APIKey: llm.APIKey, Model: llm.Model, Timeout: llm.Timeout,
		})
	case "openai", "":
		p = agentcore.NewOpenAI(agentcore.OpenAIOptions{
			BaseURL: llm.BaseURL, APIKey: llm.APIKey, Model: llm.Model, Timeout: llm.Timeout,
		})
	default:
		return nil, fmt.Errorf("%w: llm.provider %q", errConfig, llm.Provider)
	}
	retrying := agentcore.WithRetry(p, agentcore.RetryOptions{Logger: log})
	if len(llm.Fallbacks) == 0 {
		return retrying, nil
	}
	return agentcore.WithFallbacks(retrying, llm.Fallbacks, agentcore.FallbackOptions{Logger: log}), nil
}

// rateOf converts a config rate ("20/m", "off") to a bot.Rate.
func rateOf(s string) (bot.Rate, error) {
	n, per, off, err := config.ParseRate(s)
	if err != nil || off {
		return bot.Rate{}, err
	}
	return bot.Rate{Count: n, Per: per}, nil
}

// webhooks are the HTTP handlers of channels that receive events over HTTP.
func (d *daemon) webhooks() map[string]http.Handler {
	hooks := map[string]http.Handler{}
	for name, ch := range d.channels {
		if wp, ok := ch.(channels.WebhookProvider); ok {
			if h := wp.Webhook(); h != nil {
				hooks[name] = h
			}
		}
	}
	return hooks
}

// writeMetrics writes the daemon's metrics, and the Go runtime's and the
// process's (go_*, process_*), in the Prometheus text format. The samples
// carry no replica label: the scraper's target labels (instance, and pod
// under the Prometheus Operator) keep the replicas apart.
func (d *daemon) writeMetrics(w io.Writer) {
	d.metricSet.WritePrometheus(w)
	metrics.WriteProcessMetrics(w)
}
