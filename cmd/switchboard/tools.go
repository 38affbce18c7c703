package main

import (
	"context"
	"fmt"
	"slices"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/mediamodels"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/bot/messaging"
	"github.com/switchboard-chat/switchboard/bot/teams"
	"github.com/switchboard-chat/switchboard/tools"
	toolexec "github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/fs"
	"github.com/switchboard-chat/switchboard/tools/mcp"
	"github.com/switchboard-chat/switchboard/tools/memory"
	"github.com/switchboard-chat/switchboard/tools/sessions"
	toolweb "github.com/switchboard-chat/switchboard/tools/web"
)

// newTools builds the tool registry every agent shares.
func (d *daemon) newTools(approver tools.Approver) (*tools.Registry, error) {
	place, sandbox, err := d.placeCommands()
	if err != nil {
		return nil, err
	}
	ropts := tools.RegistryOptions{Scrubber: d.scrubber, Logger: d.log, Observe: d.metrics.ObserveTool}
	if rate, _ := rateOf(d.cfg.Tools.RateLimit); rate.Count > 0 {
		ropts.RateLimiter = bot.ToolRate{Limiter: d.st.rdb, Rate: rate, Logger: d.log}
	}
	reg := tools.NewRegistry(ropts)
	d.mcp = mcp.New(mcp.Options{Registry: reg, Logger: d.log,
		// The access feature exists by the time a tool is called.
		Permit: func(ctx context.Context, call tools.Call, server, tool string) (string, bool) {
			return d.access.CheckGrant(ctx, call, server, tool)
		}})
	kinds := agentKinds(d.cfg)
	perUser := func(agent string) bool { return kinds(agent) == tools.KindOpen }
	exec := toolexec.New(toolexec.Options{WorkspaceRoot: place.workspaces, Mode: d.cfg.Exec.Approval, Approver: approver, Sandbox: sandbox,
		RunAs: place.user, PerUser: perUser, Logger: d.log})
	cron := tools.NewCron(tools.CronOptions{Store: jobs.NewCronStore(d.st.db), Approver: approver, Logger: d.log})
	embedder := d.embedder()
	// The fs tools, the media tools and the attachments of messages share
	// the workspaces.
	workspaces := toolexec.Workspaces{Root: place.workspaces, RunAs: place.user, PerUser: perUser}
	d.workspaces = workspaces
	all := fs.NewTools(fs.Options{
		Workspaces: workspaces, DenyPaths: d.cfg.Tools.FS.DenyPaths,
		Docs: d.st.docs, AgentKind: kinds, Embedder: embedder,
	})
	all = append(all, memory.NewTools(memory.Options{Docs: d.st.docs, AgentKind: kinds, Embedder: embedder})...)
	all = append(all, d.knowledgeTool())
	all = append(all, sessions.NewTools(sessions.Options{Store: d.st.db, Writer: d.st.db, IsAdmin: d.isAdmin})...)
	all = append(all, &tools.Spawn{S: lazySpawner{d}}, &tools.Handoff{H: d.handoff}, teams.NewTaskTool(teams.TaskToolOptions{Board: d.st.db, TeamOf: teamOf(d.cfg),
		// The team runtime exists by the time a tool runs.
		Events: func(ctx context.Context, ev teams.TaskEvent) { d.teams.TaskEvent(ctx, ev) }}),
		teams.NewMessageTool(teams.MessageToolOptions{Mailbox: d.st.rdb, TeamOf: teamOf(d.cfg), Members: teamMembers(d.cfg),
			Activate: func(ctx context.Context, team, agent string) { d.teams.MailArrived(ctx, team, agent) }}))
	all = append(all, sessions.NewMessagingTools(messaging.New(messaging.Options{
		Outbox: d.st.db, History: d.st.db, Channels: d.channels, Bindings: bindingsOf(d.cfg),
		Nudge: d.nudge, Scrub: d.scrubber.Scrub, Logger: d.log,
	}))...)
	all = append(all, d.mediaTools(workspaces)...)
	all = append(all, d.skillTools(workspaces, approver)...)
	all = append(all, d.askUserTool())
	web := d.cfg.Tools.Web
	fetch := toolweb.NewFetch(toolweb.FetchOptions{MaxBytes: web.Fetch.MaxBytes, Timeout: web.Fetch.Timeout, AllowPrivate: web.Fetch.AllowPrivate})
	search := toolweb.NewSearch(toolweb.SearchOptions{Provider: web.Search.Provider, URL: web.Search.URL, APIKey: web.Search.APIKey})
	d.tools, d.exec, d.procs = reg, exec, toolexec.NewProcesses(exec)
	all = append(all, d.procs)
	if len(d.cfg.CredentialedExec) > 0 {
		ce, err := credentialedExec(d.cfg, exec)
		if err != nil {
			return nil, err
		}
		all = append(all, ce)
	}
	for _, spec := range customSpecs(d.cfg) {
		c, err := toolexec.NewCustom(spec, exec)
		if err != nil {
			return nil, fmt.Errorf("custom_tools: %w", err)
		}
		all = append(all, c)
	}
	for _, t := range append([]tools.Tool{tools.Datetime{}, sessions.SessionStatus{Source: d.st.db}, exec, cron, fetch, search}, all...) {
		if err := reg.Register(t); err != nil {
			return nil, err
		}
	}
	return reg, nil
}

// mediaServices are the model services behind the media tools; each one
// left nil makes its tools say which media.* setting turns it on.
type mediaServices struct {
	transcriber media.Transcriber // media.transcription: read_audio, read_video
	vision      media.ImageReader // media.vision: read_image, read_video
	images      media.ImageMaker  // media.images: create_image
	speaker     media.Speaker     // media.tts: tts
}

// mediaServices builds the media model services from media.* (an
// empty model turns a service off). Each is set only when it is on: a nil
// pointer in an interface would not read as "not configured".
func (d *daemon) mediaServices() mediaServices {
	m := mediamodels.FromConfig(d.cfg.Media, d.cfg.LLM, d.meter)
	var svc mediaServices
	if m.Transcriber != nil {
		svc.transcriber = m.Transcriber
	}
	if m.ImageReader != nil {
		svc.vision = m.ImageReader
	}
	if m.ImageMaker != nil {
		svc.images = m.ImageMaker
	}
	if m.Speaker != nil {
		svc.speaker = m.Speaker
	}
	return svc
}

// mediaTools returns read_image, read_audio, read_document, read_video,
// create_image, tts and send_file: files of the caller's workspace (the fs
// tools' jail), stored in PostgreSQL and sent through the outbox.
func (d *daemon) mediaTools(workspaces toolexec.Workspaces) []tools.Tool {
	d.models = d.mediaServices()
	svc := d.models
	return media.NewTools(media.ToolOptions{
		Files: fs.NewFiles(fs.Options{Workspaces: workspaces, DenyPaths: d.cfg.Tools.FS.DenyPaths}),
		Store: d.st.db, Outbox: d.st.db, Nudge: d.nudge, Scrub: d.scrubber.Scrub, MaxBytes: d.cfg.Media.MaxBytes,
		Transcriber: svc.transcriber, Vision: svc.vision, Images: svc.images, Speaker: svc.speaker,
	})
}

// embedder returns the embeddings model for memory search, or nil (off).
func (d *daemon) embedder() tools.Embedder {
	e := d.cfg.Tools.Memory.Embedding
	if e.Model == "" {
		return nil
	}
	if e.BaseURL == "" {
		e.BaseURL = d.cfg.LLM.BaseURL
	}
	if e.APIKey == "" && d.cfg.LLM.Provider == "openai" {
		e.APIKey = d.cfg.LLM.APIKey
	}
	d.log.Info("memory search by meaning on", "embedding_model", e.Model)
	return agentcore.NewEmbedder(agentcore.EmbedderOptions{BaseURL: e.BaseURL, APIKey: e.APIKey, Model: e.Model, Logger: d.log})
}

// isAdmin reports whether identity is one of admins.
func (d *daemon) isAdmin(identity string) bool { return slices.Contains(d.cfg.Admins, identity) }

// placeCommands decides who commands run as, where, and in which
// sandbox, and says so in the log and /status.
func (d *daemon) placeCommands() (execPlacement, *toolexec.Sandbox, error) {
	place, err := placeExec(d.cfg.DataDir, d.cfg.Exec.User, d.log)
	if err != nil {
		return place, nil, err
	}
	sandbox, why, err := toolexec.FindSandbox(d.cfg.Exec.Sandbox, d.cfg.Exec.Network, place.user)
	if err != nil {
		return place, nil, err
	}
	if sandbox == nil && d.cfg.Exec.Sandbox != toolexec.SandboxNone {
		d.log.Warn("EXEC RUNS WITHOUT A SANDBOX: commands can read and write whatever their user can; "+
			"the reason says what to install or allow, or set exec.sandbox: none to say this is intended", "reason", why)
	}
	d.execInfo = place.describe() + "; sandbox: " + sandbox.Describe()
	d.log.Info(d.execInfo)
	return place, sandbox, nil
}
