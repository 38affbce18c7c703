package bot

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// Runner runs an agent on a session; *agentcore.Agent implements it.
type Runner interface {
	Run(ctx context.Context, in agentcore.RunInput) (agentcore.RunResult, error)
}

// Options wires a Router. Stores are required; the rest have defaults.
type Options struct {
	Agent      Runner
	AgentName  string
	History    agentcore.History
	Outbox     Outbox
	Recovery   Recovery
	Identities Identities
	// AccessRequests and DecisionMessages serve access.mode=request.
	AccessRequests   AccessRequestStore
	DecisionMessages DecisionMessages
	// AdminChat (platform:chat_id), when set, receives access requests
	// instead of each admin's direct messages.
	AdminChat string
	// Approvals decides presses on approval buttons; nil: none.
	Approvals *Approvals
	// Jobs stores cron jobs for /jobs; nil: jobs are off.
	Jobs     JobStore
	Dedupe   Deduper
	Notice   Notice
	Limiter  Limiter
	Locker   Locker
	Channels map[string]channels.Channel // by platform
	Access   AccessOptions
	Limits   Limits
	Lanes    LaneOptions
	Metrics  *Metrics
	Logger   *slog.Logger
	// Nudge, when set, is called after an outbox row is written so the
	// dispatcher delivers without waiting for its next poll.
	Nudge func()
	// Status returns the lines /status shows (readiness of dependencies).
	Status func(ctx context.Context) []string
	// Scrub removes configured secrets from outgoing text; nil: identity.
	Scrub func(string) string
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
	post  *poster
}

// NewRouter returns a Router; call Close to wait for running work.
func NewRouter(opts Options) *Router {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
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
	r := &Router{opts: opts, log: opts.Logger, post: &poster{
		outbox: opts.Outbox, channels: opts.Channels, nudge: opts.Nudge, scrub: opts.Scrub, log: opts.Logger,
	}}
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
func (r *Router) Handle(ctx context.Context, in channels.Inbound) {
	log := r.log.With("platform", in.Platform, "chat", in.ChatID, "user", in.Identity())
	kind := "message"
	if in.Press != nil {
		kind = "press"
	}
	if in.ExternalID != "" && r.opts.Dedupe != nil {
		first, err := r.opts.Dedupe.FirstSeen(ctx, "in:"+in.Platform+":"+in.ExternalID, DedupeTTL)
		if err != nil {
			// Redis down: Postgres still dedupes agent messages by ExternalID.
			log.Warn("dedupe unavailable", "err", err)
		} else if !first {
			r.opts.Metrics.Duplicates.Inc()
			log.Info("duplicate inbound dropped", "external_id", in.ExternalID)
			return
		}
	}
	r.opts.Metrics.MessagesIn.WithLabelValues(in.Platform, kind).Inc()
	if in.Press != nil {
		r.handlePress(ctx, in)
		return
	}
	allowed, err := r.allowed(ctx, in)
	if err != nil {
		log.Error("access check failed", "err", err)
		r.notify(ctx, in, "I can't check your access right now (storage unavailable). Please try again in a minute.")
		return
	}
	if !allowed {
		r.refuse(ctx, in)
		return
	}
	if !r.withinLimits(ctx, in, log) {
		return
	}
	text := strings.TrimSpace(in.Text)
	if text == "" {
		return
	}
	if cmd, args, ok := parseCommand(text); ok {
		if r.runCommand(ctx, in, cmd, args) {
			return
		}
	}
	r.route(ctx, in, text, log)
}

// route records the message in its session and queues a run on the lane.
func (r *Router) route(ctx context.Context, in channels.Inbound, text string, log *slog.Logger) {
	key := agentcore.SessionKey{Agent: r.opts.AgentName, Scope: in.Address().String()}.String()
	msg := agentcore.Message{Role: agentcore.RoleUser, Content: text, ExternalID: in.ExternalID}
	if _, err := r.opts.History.Append(ctx, key, msg); err != nil {
		if errors.Is(err, agentcore.ErrDuplicate) {
			r.opts.Metrics.Duplicates.Inc()
			log.Info("duplicate message dropped", "external_id", in.ExternalID)
			return
		}
		log.Error("record message failed", "err", err)
		r.notify(ctx, in, "I couldn't save your message (storage unavailable). Please send it again in a minute.")
		return
	}
	job := laneJob{Session: key, To: in.Address(), UserID: in.Identity(), Direct: in.Direct, ReplyTo: in.MessageID}
	if !r.lanes.enqueue(job) {
		// The message is stored; recovery will run it once the lane drains.
		r.notify(ctx, in, "I'm still busy with earlier messages in this chat. I'll get to this one as soon as I can.")
	}
}

// notify queues a short system message to the chat in.
func (r *Router) notify(ctx context.Context, in channels.Inbound, text string) {
	r.send(ctx, OutboxMessage{To: in.Address(), Text: text, ReplyTo: in.MessageID})
}

func (r *Router) send(ctx context.Context, m OutboxMessage) { r.post.send(ctx, m) }

// handlePress routes a button press to the service that owns the button.
// Every press is answered, so the client stops spinning; malformed or
// forged data changes nothing.
func (r *Router) handlePress(ctx context.Context, in channels.Inbound) {
	kind, id, choice, ok := parseButton(in.Press.Data)
	switch {
	case ok && kind == buttonApproval && r.opts.Approvals != nil:
		r.opts.Approvals.Decide(ctx, in, id, choice)
	case ok && kind == buttonAccess:
		r.decideAccess(ctx, in, id, choice)
	default:
		r.log.Info("press on unknown button", "user", in.Identity())
		r.answerPress(ctx, in, "This button is no longer active.")
	}
}

func (r *Router) answerPress(ctx context.Context, in channels.Inbound, text string) {
	r.post.answer(ctx, in, text)
}
