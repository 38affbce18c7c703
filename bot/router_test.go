package bot_test

import (
	"context"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/bot/contextfiles"
	"github.com/switchboard-chat/switchboard/bot/customtools"
	"github.com/switchboard-chat/switchboard/bot/handoff"
	"github.com/switchboard-chat/switchboard/bot/subagents"
	"github.com/switchboard-chat/switchboard/bot/teams"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
	"github.com/switchboard-chat/switchboard/tools"
)

// recorder is a channel that records what is sent to it (Recorder),
// edits and press answers.
type recorder struct {
	*channeltest.Recorder
	mu      sync.Mutex
	edits   map[string]string // message id → latest text
	answers []string
}

func newRecorder() *recorder {
	return &recorder{Recorder: channeltest.NewRecorder(), edits: map[string]string{}}
}

func (r *recorder) Edit(_ context.Context, _ channels.Address, id string, m channels.Outbound) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(m.Buttons) != 0 {
		return fmt.Errorf("edits here always remove buttons")
	}
	r.edits[id] = m.Text
	return nil
}

func (r *recorder) AnswerPress(_ context.Context, _ channels.ButtonPress, text string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.answers = append(r.answers, text)
	return nil
}

func (r *recorder) lastAnswer() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.answers) == 0 {
		return ""
	}
	return r.answers[len(r.answers)-1]
}

func (r *recorder) edit(id string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.edits[id]
}

// waitEdit waits until message id (1-based send order) was edited.
func (r *recorder) waitEdit(t *testing.T, id string) string {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if e := r.edit(id); e != "" {
			return e
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("message %s was never edited", id)
	return ""
}

// pipeline is a Router and Dispatcher on real PostgreSQL and Redis, with
// the real OpenAI provider talking to the scripted LLM server.
type pipeline struct {
	router    *bot.Router
	ch        *recorder
	llm       *llmtest.Server
	db        *postgres.DB
	rdb       *redis.Store
	nudge     func()
	approvals *approvals.Service
	access    *access.Service
	handoff   *handoff.Service
	teams     *teams.Service
	subagents *subagents.Service
}

func newPipeline(t testing.TB, limits bot.Limits, access bot.AccessOptions) *pipeline {
	return startPipeline(t, pipelineOptions{Limits: limits, Access: access})
}

// pipelineOptions varies a test pipeline; zero fields take defaults.
type pipelineOptions struct {
	Limits bot.Limits
	Access bot.AccessOptions // Mode defaults to open
	Lanes  bot.LaneOptions
	// Tools returns the agent's tools, given the pipeline's approvals;
	// nil means the datetime tool only.
	Tools func(approvals *approvals.Service) []tools.Tool
	// Agents are more agents by name (model "m-NAME", the same tools);
	// Bindings choose them.
	Agents   []string
	Bindings []bot.Binding
	// Handoff turns on handoff routes (Redis + Postgres).
	Handoff bool
	// Subagents, when set, turns subagents on (in Redis) and offers the
	// spawn tool.
	Subagents *subagents.Options
	// Team offers team_tasks and team_message: team crew is default (the
	// lead) and ops.
	Team bool
	// Tracing, when set, traces the router, the dispatcher, the agent,
	// PostgreSQL and Redis.
	Tracing trace.TracerProvider
	// Media, when set, takes in attachments and sends files (see
	// mediaPipeline).
	Media *mediaSetup
	// StopProcesses is the router's StopProcesses (a stopped turn's
	// background processes).
	StopProcesses func(session string, since time.Time) int
}

func startPipeline(t testing.TB, o pipelineOptions) *pipeline {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	db := pgtest.OpenWith(t, ctx, postgres.Options{Tracing: o.Tracing})
	rdb, err := redis.Open(ctx, redistest.URL(t), redis.Options{Prefix: redistest.Prefix(t), Tracing: o.Tracing})
	if err != nil {
		t.Fatalf("redis: %v", err)
	}
	llm := llmtest.NewServer()
	ch := newRecorder()
	ch.FileLimit = o.Media.fileLimit()
	chans := map[string]channels.Channel{"test": ch}
	var tracer trace.Tracer
	if o.Tracing != nil {
		tracer = o.Tracing.Tracer("test")
	}
	disp := bot.NewDispatcher(bot.DispatcherOptions{Outbox: db, Channels: chans, Owner: "t", Poll: 20 * time.Millisecond, Tracer: tracer,
		OpenFile: o.Media.openFile(db)})
	if o.Access.Mode == "" {
		o.Access.Mode = bot.AccessModeOpen
	}
	var r *bot.Router
	ap := approvals.New(approvals.Options{Store: db, Messages: db, Approvers: o.Access.Admins, Timeout: time.Minute})
	toolset := []tools.Tool{tools.Datetime{}}
	if o.Tools != nil {
		toolset = o.Tools(ap)
	}
	teamOf := func(agent string) (string, string, bool) {
		return "crew", "default", agent == "default" || agent == "ops"
	}
	members := func(string) []string { return []string{"default", "ops"} }
	var tm *teams.Service
	if o.Team {
		toolset = append(toolset,
			teams.NewTaskTool(teams.TaskToolOptions{Board: db, TeamOf: teamOf,
				Events: func(ctx context.Context, ev teams.TaskEvent) { tm.TaskEvent(ctx, ev) }}),
			teams.NewMessageTool(teams.MessageToolOptions{Mailbox: rdb, TeamOf: teamOf, Members: members,
				Activate: func(ctx context.Context, team, agent string) { tm.MailArrived(ctx, team, agent) }}))
	}
	var subs *subagents.Service
	if o.Subagents != nil {
		o.Subagents.Store = rdb
		toolset = append(toolset, &tools.Spawn{S: lazySpawner{&subs}})
	}
	reg := tools.NewRegistry(tools.RegistryOptions{})
	for _, tool := range toolset {
		if err := reg.Register(tool); err != nil {
			t.Fatal(err)
		}
	}
	agent := &agentcore.Agent{
		Name: "default", Model: "m", History: db, Tools: reg, Tracer: tracer,
		Provider: agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: llm.URL(), Model: "m"}),
	}
	agents := map[string]bot.Runner{}
	info := []bot.AgentInfo{{Name: "default", Model: "m"}}
	for _, name := range o.Agents {
		agents[name] = &agentcore.Agent{
			Name: name, Model: "m-" + name, History: db, Tools: reg,
			Provider: agentcore.NewOpenAI(agentcore.OpenAIOptions{BaseURL: llm.URL(), Model: "m-" + name}),
		}
		info = append(info, bot.AgentInfo{Name: name, Description: "the " + name + " agent", Model: "m-" + name})
	}
	if len(o.Agents) == 0 {
		info = nil
	}
	var handoffs *handoff.Service
	var route bot.AgentRoute
	if o.Handoff {
		handoffs = &handoff.Service{
			Routes:    handoff.NewRoutes(handoff.RoutesOptions{Cache: rdb, Store: db}),
			Directory: bot.Directory{Default: "default", Names: append([]string{"default"}, o.Agents...), Bindings: o.Bindings},
			History:   db, Outbox: db, Nudge: disp.Nudge,
		}
		route = handoffs
	}
	var handOver *bot.Dispatcher // rows handed over in memory, as the daemon does
	if o.Tracing != nil {
		handOver = disp
	}
	ropts := bot.Options{
		Dispatcher: handOver, Route: route,
		Agents: agents, Bindings: o.Bindings, AgentInfo: info,
		Agent: agent, History: db, Outbox: db, Recovery: db, Identities: db,
		Dedupe: rdb, Notice: rdb, Limiter: rdb, Locker: rdb, Channels: chans,
		Access: o.Access, Limits: o.Limits, Lanes: o.Lanes, Nudge: disp.Nudge,
		Tracer: tracer, Stops: rdb, StopProcesses: o.StopProcesses,
	}
	o.Media.wire(&ropts, db)
	r = bot.NewRouter(ropts)
	// The team pump is not run here; a test runs its repeated
	// announcements (Reannounce) with every pending task overdue.
	tm = teams.New(r, teams.Options{Mail: rdb, Outcomes: db, Board: db, TeamOf: teamOf, Members: members,
		ReannounceAfter: time.Nanosecond})
	so := subagentOptions(o.Subagents)
	so.History = db
	subs = subagents.New(r, so)
	r.RunInBackground(tm)
	r.RunInBackground(subs)
	// The features' commands, registered as cmd/switchboard does; /tools
	// without a store, so it says custom tools are not available
	// (adminServer wires a store of its own).
	cmds := append(teams.Commands(tm), handoff.Commands(handoffs)...)
	cmds = append(cmds, contextfiles.Commands(contextfiles.Options{Docs: db, Chats: r})...)
	if err := r.Register(append(cmds, customtools.Commands(customtools.New(customtools.Options{}))...)...); err != nil {
		t.Fatal(err)
	}
	ac := access.New(access.Options{Requests: db, Grants: db, Messages: db, Admins: o.Access.Admins, Allow: o.Access.Allow})
	hookDecisions(t, r, ap, ac)
	done, stopsDone := make(chan struct{}), make(chan struct{})
	go func() { disp.Run(ctx); close(done) }()
	go func() { r.RunStops(ctx); close(stopsDone) }()
	t.Cleanup(func() {
		_ = r.Close(context.Background())
		cancel()
		<-done
		<-stopsDone
		llm.Close()
		_ = rdb.Close()
	})
	return &pipeline{router: r, ch: ch, llm: llm, db: db, rdb: rdb, nudge: disp.Nudge, approvals: ap, access: ac, handoff: handoffs,
		teams: tm, subagents: subs}
}

// hookDecisions wires the approvals and access features into r as the
// daemon does (cmd/switchboard/decisions.go).
func hookDecisions(t testing.TB, r *bot.Router, ap *approvals.Service, ac *access.Service) {
	t.Helper()
	ap.Attach(r)
	ac.Attach(r)
	r.HandleUnknown(ac.RequestAccess)
	if err := r.Register(append(approvals.Commands(ap), access.Commands(ac)...)...); err != nil {
		t.Fatal(err)
	}
	for kind, h := range map[string]bot.PressHandler{
		approvals.ButtonKind: ap.Decide, access.RequestButton: ac.DecideRequestPress, access.GrantButton: ac.DecideGrantPress,
	} {
		if err := r.HandlePresses(kind, h); err != nil {
			t.Fatal(err)
		}
	}
}

var extID atomic.Int64 // tests send from several goroutines

func msg(chat, user, text string) channels.Inbound {
	return channels.Inbound{Platform: "test", ChatID: chat, UserID: user, UserName: "U" + user,
		Text: text, ExternalID: fmt.Sprintf("%d-%d", time.Now().UnixNano(), extID.Add(1))}
}

func TestRouterAnswersAndDedupes(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	in := msg("c1", "u1", "hello")
	p.router.Handle(ctx, in)
	p.router.Handle(ctx, in) // redelivered
	got := p.ch.WaitFor(t, "c1", 1)
	if !strings.Contains(got[0].Text, "echo: hello") {
		t.Fatalf("reply = %q", got[0].Text)
	}
	p.router.Handle(ctx, msg("c1", "u1", "next"))
	got = p.ch.WaitFor(t, "c1", 2)
	if !strings.Contains(got[1].Text, "history: 2 user messages") {
		t.Fatalf("second reply = %q (the duplicate must not be in history)", got[1].Text)
	}
	// Each outbox row is sent under its own deduplication key.
	if k0, k1 := got[0].Key, got[1].Key; !strings.HasPrefix(k0, "sb") || !strings.HasPrefix(k1, "sb") || k0 == k1 {
		t.Fatalf("send keys = %q, %q; want two distinct outbox keys", k0, k1)
	}
	if n := len(p.llm.Requests()); n != 2 {
		t.Fatalf("LLM called %d times, want 2", n)
	}
}

func TestRouterRateLimitNoticeOnce(t *testing.T) {
	p := newPipeline(t, bot.Limits{User: bot.Rate{Count: 2, Per: time.Minute}}, bot.AccessOptions{})
	ctx := context.Background()
	// Two messages within the limit, each answered before the next.
	for i := range 2 {
		p.router.Handle(ctx, msg("c2", "u2", fmt.Sprintf("m%d", i)))
		p.ch.WaitFor(t, "c2", i+1)
	}
	for i := 2; i < 6; i++ {
		p.router.Handle(ctx, msg("c2", "u2", fmt.Sprintf("m%d", i)))
	}
	got := p.ch.WaitFor(t, "c2", 3) // two replies + one notice
	time.Sleep(300 * time.Millisecond)
	notices := 0
	for _, m := range p.ch.WaitFor(t, "c2", 3) {
		if strings.Contains(m.Text, "Try again in") {
			notices++
		}
	}
	if notices != 1 || p.ch.Count("c2") != 3 {
		t.Fatalf("want exactly one rate-limit notice and two replies, got %d notices in %+v", notices, got)
	}
	// Another user in another chat is not affected.
	p.router.Handle(ctx, msg("c3", "u3", "me too"))
	if r := p.ch.WaitFor(t, "c3", 1); !strings.Contains(r[0].Text, "echo: me too") {
		t.Fatalf("other user's reply = %q", r[0].Text)
	}
}

func TestRouterAllowlistDeniesStrangers(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Mode: bot.AccessModeAllowlist, Allow: []string{"test:friend"}})
	ctx := context.Background()
	p.router.Handle(ctx, msg("c4", "stranger", "let me in"))
	p.router.Handle(ctx, msg("c4", "stranger", "please"))
	p.router.Handle(ctx, msg("c5", "friend", "hi"))
	if r := p.ch.WaitFor(t, "c5", 1); !strings.Contains(r[0].Text, "echo: hi") {
		t.Fatalf("allowed user's reply = %q", r[0].Text)
	}
	got := p.ch.WaitFor(t, "c4", 1)
	if !strings.Contains(got[0].Text, "test:stranger") {
		t.Fatalf("refusal should name the identity: %q", got[0].Text)
	}
	time.Sleep(200 * time.Millisecond)
	if n := p.ch.Count("c4"); n != 1 {
		t.Fatalf("stranger got %d messages, want 1 (no spam)", n)
	}
	for _, r := range p.llm.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "let me in") {
				t.Fatal("a stranger's message reached the model")
			}
		}
	}
}

func TestRouterCommands(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{Admins: []string{"test:boss"}})
	ctx := context.Background()
	p.router.Handle(ctx, msg("c6", "boss", "/whoami@my_bot"))
	p.router.Handle(ctx, msg("c6", "boss", "/help"))
	got := p.ch.WaitFor(t, "c6", 2)
	if !strings.Contains(got[0].Text, "test:boss") || !strings.Contains(got[0].Text, "admin") {
		t.Fatalf("/whoami = %q", got[0].Text)
	}
	if !strings.Contains(got[1].Text, "/status") {
		t.Fatalf("/help = %q", got[1].Text)
	}
	if n := len(p.llm.Requests()); n != 0 {
		t.Fatalf("commands reached the model %d times", n)
	}
}

func TestRouterToolCallLoop(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	p.router.Handle(context.Background(), msg("c7", "u7", "what time? CALL_TOOL:datetime"))
	got := p.ch.WaitFor(t, "c7", 1)
	if !strings.Contains(got[0].Text, "tool datetime said:") || !strings.Contains(got[0].Text, "UTC") {
		t.Fatalf("reply = %q", got[0].Text)
	}
}

// TestRecoveryFinishesInterruptedSession: a session whose user message was
// stored but never answered (a crash) is answered by Recover.
func TestRecoveryFinishesInterruptedSession(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx := context.Background()
	key := agentcore.SessionKey{Agent: "default", Scope: "test:c8"}.String()
	if _, err := p.db.Append(ctx, key, agentcore.Message{Role: agentcore.RoleUser, Content: "lost in a crash", ExternalID: "x8"}); err != nil {
		t.Fatal(err)
	}
	// Only sessions idle for a moment are recovered (live runs are left alone).
	deadline := time.Now().Add(15 * time.Second)
	for p.ch.Count("c8") == 0 && time.Now().Before(deadline) {
		if _, err := p.router.Recover(ctx, 0); err != nil {
			t.Fatalf("recover: %v", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	got := p.ch.WaitFor(t, "c8", 1)
	if !strings.Contains(got[0].Text, "echo: lost in a crash") {
		t.Fatalf("recovered reply = %q", got[0].Text)
	}
	if _, err := p.router.Recover(ctx, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	if n := p.ch.Count("c8"); n != 1 {
		t.Fatalf("recovered session answered %d times", n)
	}
}

// TestRunningRecoveryAnswersWhatAnotherReplicaLeft: while this replica
// runs, another one stores a message and dies before answering it. The
// periodic passes, which look only at what happened since the last one,
// find it (not the pass at start, which found nothing) and the chat gets
// its answer, once.
func TestRunningRecoveryAnswersWhatAnotherReplicaLeft(t *testing.T) {
	p := newPipeline(t, bot.Limits{}, bot.AccessOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.router.RunRecovery(ctx, 200*time.Millisecond) }()
	t.Cleanup(func() { cancel(); <-done })
	time.Sleep(500 * time.Millisecond) // the pass at start is over
	key := agentcore.SessionKey{Agent: "default", Scope: "test:c18"}.String()
	if _, err := p.db.Append(context.Background(), key, agentcore.Message{Role: agentcore.RoleUser, Content: "left by a dead replica", ExternalID: "x18"}); err != nil {
		t.Fatal(err)
	}
	got := p.ch.WaitFor(t, "c18", 1)
	if !strings.Contains(got[0].Text, "echo: left by a dead replica") {
		t.Fatalf("recovered reply = %q", got[0].Text)
	}
	time.Sleep(time.Second) // more passes: the answered session is left alone
	if n := p.ch.Count("c18"); n != 1 {
		t.Fatalf("the chat got %d answers, want 1", n)
	}
}

// lazySpawner hands the spawn tool to the subagents service, built after
// the router, which is built after the tools.
type lazySpawner struct{ s **subagents.Service }

func (l lazySpawner) Spawn(ctx context.Context, call tools.Call, task, label string, wait bool) (tools.Subagent, error) {
	return (*l.s).Spawn(ctx, call, task, label, wait)
}

func (l lazySpawner) Subagents(ctx context.Context, call tools.Call) ([]tools.Subagent, error) {
	return (*l.s).Subagents(ctx, call)
}

func (l lazySpawner) CancelSubagents(ctx context.Context, call tools.Call, which string) ([]tools.Subagent, error) {
	return (*l.s).CancelSubagents(ctx, call, which)
}

func subagentOptions(o *subagents.Options) subagents.Options {
	if o == nil {
		return subagents.Options{}
	}
	return *o
}
