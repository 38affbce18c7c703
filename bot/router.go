package bot

import (
	"context"
	"errors"
	"fmt"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot/stream"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Runner runs an agent on a session; *agentcore.Agent implements it.
type Runner interface {
	Run(ctx context.Context, in agentcore.RunInput) (agentcore.RunResult, error)
}

// Options wires a Router. Stores are required; the rest have defaults.
type Options struct {
	// Models, when set, chooses the model of each run by its chat (/model);
	// nil: every run uses its agent's model.
	Models ModelChooser
	// Agent (called AgentName) answers wherever no binding chooses one of
	// Agents.
	Agent     Runner
	AgentName string
	// Agents are the other agents, by name; Bindings choose them per chat
	// (first match wins); AgentInfo describes all of them for /agents.
	Agents    map[string]Runner
	Bindings  []Binding
	AgentInfo []AgentInfo
	// Route says which agent answers in a chat; nil: the bindings alone
	// decide (Directory).
	Route AgentRoute
	// History, Outbox, Recovery and Identities are the stores of the
	// messages, the replies and who is who.
	History    agentcore.History
	Outbox     Outbox
	Recovery   Recovery
	Identities Identities
	Dedupe     Deduper
	Notice     Notice
	Limiter    Limiter
	Locker     Locker
	Channels   map[string]channels.Channel // by platform
	Access     AccessOptions
	Limits     Limits
	Lanes      LaneOptions
	Metrics    *Metrics
	Logger     *slog.Logger
	// Nudge, when set, is called after an outbox row is written so the
	// dispatcher delivers without waiting for its next poll.
	Nudge func()
	// Dispatcher, when set, delivers the rows the router writes: they are
	// written already claimed for it and handed over in memory. Nudge
	// defaults to its Nudge.
	Dispatcher *Dispatcher
	// Status returns the lines /status shows (readiness of dependencies).
	Status func(ctx context.Context) []string
	// Scrub removes configured secrets from outgoing text; nil: identity.
	Scrub func(string) string
	// Attachments, with Workspace, takes in the files sent with a message
	// before it is stored; without them each file is only named to the
	// model as not downloaded.
	Attachments AttachmentReceiver
	// Workspace returns the workspace directory of a tool call
	// (tools/exec Workspaces.For): a message's files go to the workspace
	// its run's tools use.
	Workspace func(tools.Call) (string, error)
	// Tracer traces each message from inbound to its replies' sends; nil
	// records nothing.
	Tracer trace.Tracer
	// Stream shows answers while the model writes them, on the channels
	// that can (channels.LiveAnswerer; conversation.stream). LiveStore
	// records the live messages, so a run that dies mid-answer leaves
	// them to the next (nil: in memory only).
	Stream    bool
	LiveStore stream.Store
	// Stops carries /stop to the replica that runs the turn (RunStops
	// listens); nil: /stop reaches the turns of this replica only.
	Stops StopBus
	// StopProcesses, when set, kills the background processes session
	// started since a time (tools/exec Processes.StopStartedSince): a
	// stopped turn's processes go with it. It returns how many it killed.
	StopProcesses func(session string, since time.Time) int
}

// Limits are the inbound rate limits; a zero Rate means no limit.
type Limits struct {
	User Rate
	Chat Rate
}

// DedupeTTL is how long an inbound event id is remembered.
const DedupeTTL = 48 * time.Hour

// Router is the inbound pipeline: dedupe → access → rate limit → chat
// commands → route → per-session lane → agent → outbox.
type Router struct {
	opts  Options
	log   *slog.Logger
	lanes *lanes
	out   *outboxWriter

	// presses and unknown are the features' hooks: the press handlers by
	// button kind (HandlePresses) and what request mode does for an
	// unknown person (HandleUnknown).
	presses map[string]PressHandler
	unknown func(ctx context.Context, in channels.Inbound)
	// answers takes the messages that answer a waiting question
	// (TakeAnswers).
	answers AnswerTaker
	// registered are the features' chat commands (Register).
	registered []Command
	// owners are the features that own background sessions
	// (RunInBackground).
	owners []SessionOwner
	// running are the turns running here, which /stop cancels.
	running runningTurns
	// stopsListening is set while RunStops hears other replicas' stops.
	stopsListening atomic.Bool
}

// NewRouter returns a Router; call Close to wait for running work.
func NewRouter(opts Options) *Router {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Metrics == nil {
		opts.Metrics = NewMetrics(nil)
	}
	if opts.AgentName == "" {
		opts.AgentName = "default"
	}
	if opts.Scrub == nil {
		opts.Scrub = func(s string) string { return s }
	}
	opts.Tracer = tracerOr(opts.Tracer)
	if opts.Nudge == nil && opts.Dispatcher != nil {
		opts.Nudge = opts.Dispatcher.Nudge
	}
	r := &Router{opts: opts, log: opts.Logger, out: &outboxWriter{
		outbox: opts.Outbox, channels: opts.Channels, nudge: opts.Nudge, dispatch: opts.Dispatcher, scrub: opts.Scrub, log: opts.Logger,
	}}
	if r.opts.Route == nil {
		r.opts.Route = r.directory()
	}
	r.lanes = newLanes(opts.Lanes, r.runSession, opts.Logger)
	return r
}

// Close stops accepting lane work and waits for running runs to finish or
// for ctx to end.
func (r *Router) Close(ctx context.Context) error {
	return r.lanes.close(ctx)
}

// Handle processes one inbound event. It returns quickly: agent runs happen
// on the session's lane.
//
// It returns nil once the event is durably stored (a message is in its
// session, a press decided or answered) or was deliberately dropped (a
// duplicate, a refused sender, a rate-limited or empty message), and an
// error when it could not be stored: the channel must then not confirm it,
// so that it is delivered again. The work runs under a context that the
// caller's cancellation (shutdown, lost leadership) does not cut short at
// once; see durable.
//
// Messages are deduplicated by their ExternalID in PostgreSQL only (the
// unique key Append enforces), and a redelivered message that is stored
// already still gets a run queued, so a crash between the save and the run
// cannot strand it. Commands and presses, which store no message, are
// deduplicated by a Redis mark set just before they act (after the access
// check, which may fail). A message is charged to the rate limits once per
// ExternalID, so a redelivery is not refused for its own earlier attempts.
func (r *Router) Handle(ctx context.Context, in channels.Inbound) (err error) {
	ctx, span := r.opts.Tracer.Start(ctx, spanInbound, trace.WithSpanKind(trace.SpanKindConsumer), chatAttrs(in.Platform, in.ExternalID))
	defer func() { endSpan(span, err) }()
	ctx, cancel := durable(ctx)
	defer cancel()
	log := r.log.With("platform", in.Platform, "chat", in.ChatID, "user", in.Identity())
	if in.Press != nil {
		if r.seenBefore(ctx, "in:", in, log) {
			r.opts.Metrics.Duplicates.Inc()
			log.Info("duplicate press dropped", "external_id", in.ExternalID)
			return nil
		}
		r.opts.Metrics.MessagesIn.WithLabelValues(in.Platform, "press").Inc()
		r.handlePress(ctx, in)
		return nil
	}
	allowed, err := r.allowed(ctx, in)
	if err != nil {
		log.Debug("access check failed; the message is left for redelivery", "external_id", in.ExternalID, "err", err)
		return fmt.Errorf("access check: %w", err)
	}
	if !allowed {
		r.refuse(ctx, in)
		return nil
	}
	text := strings.TrimSpace(in.Text)
	if text == "" && len(in.Attachments) == 0 {
		return nil
	}
	cmd, args, isCmd := parseCommand(text)
	// A caption is never a command: the file goes to the agent.
	isCmd = isCmd && len(in.Attachments) == 0 && r.isCommand(cmd)
	if isCmd && r.seenBefore(ctx, "in:", in, log) {
		r.opts.Metrics.Duplicates.Inc()
		log.Info("duplicate command dropped", "external_id", in.ExternalID)
		return nil
	}
	switch {
	case isCmd:
		r.opts.Metrics.MessagesIn.WithLabelValues(in.Platform, "message").Inc()
		if !r.withinLimits(ctx, in, log) {
			return nil
		}
	case r.limited() && !r.seenBefore(ctx, "counted:", in, log):
		// Charged once per ExternalID; counted in when stored (route).
		if !r.withinLimits(ctx, in, log) {
			r.opts.Metrics.MessagesIn.WithLabelValues(in.Platform, "message").Inc()
			return nil
		}
	}
	if isCmd {
		r.runCommand(ctx, in, cmd, args)
		return nil
	}
	return r.route(ctx, in, text, log)
}

// seenBefore marks in's event id under prefix in Redis and reports whether
// it was marked already (a redelivery). Without an id or a Redis, or when
// Redis fails, it reports false.
func (r *Router) seenBefore(ctx context.Context, prefix string, in channels.Inbound, log *slog.Logger) bool {
	if in.ExternalID == "" || r.opts.Dedupe == nil {
		return false
	}
	first, err := r.opts.Dedupe.FirstSeen(ctx, prefix+in.Platform+":"+in.ExternalID, DedupeTTL)
	if err != nil {
		log.Debug("dedupe unavailable", "err", err)
		return false
	}
	return !first
}

// limited reports whether inbound rate limits apply.
func (r *Router) limited() bool {
	return r.opts.Limiter != nil && (r.opts.Limits.User.Count > 0 || r.opts.Limits.Chat.Count > 0)
}

// isCommand reports whether name is a known chat command.
func (r *Router) isCommand(name string) bool {
	for _, c := range r.commands() {
		if c.name == name {
			return true
		}
	}
	return false
}

// route records the message in its session, cut to its platform's limit
// (capInbound; the person is told), and queues a run on the lane.
// A message stored before (a redelivery) is not stored again, but its run
// is still queued: if it was answered already the run is idle.
func (r *Router) route(ctx context.Context, in channels.Inbound, text string, log *slog.Logger) error {
	key := r.sessionKey(ctx, in.Address())
	limit := inboundLimit(in.Platform)
	text, cut := capInbound(text, limit)
	if r.answers != nil {
		taken, err := r.answers(ctx, key, in, text)
		if err != nil {
			log.Debug("answer check failed; the message is left for redelivery", "external_id", in.ExternalID, "err", err)
			return fmt.Errorf("take answer: %w", err)
		}
		if taken {
			r.opts.Metrics.MessagesIn.WithLabelValues(in.Platform, "answer").Inc()
			return nil
		}
	}
	// Received before the message is stored, so that Handle acknowledges
	// the message only with its files; a failed download is redelivered.
	files, err := r.receive(ctx, key, in, log)
	if err != nil {
		log.Debug("receive attachments failed; the message is left for redelivery", "external_id", in.ExternalID, "err", err)
		return fmt.Errorf("receive attachments: %w", err)
	}
	msg := agentcore.Message{Role: agentcore.RoleUser, Content: withAttachments(text, files.Lines), Images: files.Images,
		ExternalID: in.ExternalID}
	fresh := true
	if _, err := r.opts.History.Append(ctx, key, msg); err != nil {
		if !errors.Is(err, agentcore.ErrDuplicate) {
			log.Debug("record message failed; the message is left for redelivery", "external_id", in.ExternalID, "err", err)
			return fmt.Errorf("record message: %w", err)
		}
		r.opts.Metrics.Duplicates.Inc()
		log.Info("message stored already; queueing its run anyway", "external_id", in.ExternalID)
		fresh = false
	}
	if fresh {
		r.opts.Metrics.MessagesIn.WithLabelValues(in.Platform, "message").Inc()
		if cut > 0 {
			r.notify(ctx, in, cutNotice(limit, cut))
		}
		for _, t := range files.Tell {
			r.notify(ctx, in, t)
		}
	}
	job := laneJob{Session: key, To: in.Address(), UserID: in.Identity(), Direct: in.Direct, ReplyTo: in.MessageID, message: fresh,
		trace: trace.SpanContextFromContext(ctx)}
	if !r.lanes.enqueue(job) {
		// Shutting down: the message is stored; recovery runs it after the restart.
		r.log.Info("not running now (shutting down); recovery will", "session", key)
	}
	return nil
}

// notify queues a short system message to the chat in.
func (r *Router) notify(ctx context.Context, in channels.Inbound, text string) {
	r.send(ctx, OutboxMessage{To: in.Address(), Text: text, ReplyTo: in.MessageID})
}

func (r *Router) send(ctx context.Context, m OutboxMessage) { r.out.send(ctx, m) }
