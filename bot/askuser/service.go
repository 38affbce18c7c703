package askuser

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Timeout is how long a question waits for its answer: then it expires
// and the agent is told nobody answered.
const Timeout = time.Hour

// Pipeline is what questions need of the chat pipeline; *bot.Router
// implements it.
type Pipeline interface {
	// AskDecision queues m and records it in store before it can be
	// delivered, so an answer always finds the message to edit.
	AskDecision(ctx context.Context, store bot.DecisionMessages, m bot.OutboxMessage, kind, subject, role string)
	// EditDecisions shows the outcome in every message about subject,
	// without buttons.
	EditDecisions(ctx context.Context, store bot.DecisionMessages, kind, subject string, text func(bot.DecisionMessage) string)
	// AnswerPress acknowledges a button press, showing text to the presser.
	AnswerPress(ctx context.Context, in channels.Inbound, text string)
	// Notify queues a short system message to the chat in.
	Notify(ctx context.Context, in channels.Inbound, text string)
	// Resume lets the run parked in session go on, in chat for user.
	Resume(ctx context.Context, session string, chat channels.Address, user string)
	// SessionKey is the session the chat at addr talks in.
	SessionKey(ctx context.Context, addr channels.Address) string
}

// Options configures the questions.
type Options struct {
	Store    Store
	Messages bot.DecisionMessages
	Timeout  time.Duration // default Timeout
	Logger   *slog.Logger
}

// Service asks people the agents' questions and hands their answers back.
// Nothing waits for an answer: the run parks (a tools.Result with Waiting)
// and an answer on any replica resumes it. State lives in the store, so a
// question survives restarts.
type Service struct {
	o        Options
	chat     Pipeline
	expiries bot.ExpiryWatch
}

// New returns the question service; Attach it to the pipeline before the
// first run.
func New(o Options) *Service {
	if o.Timeout <= 0 {
		o.Timeout = Timeout
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o, expiries: bot.ExpiryWatch{Every: lookEvery}}
}

// Attach gives s the pipeline it posts through and resumes runs with. The
// service exists before the pipeline (the agents' tools need it, and the
// pipeline needs the agents), so the two are joined once both exist.
func (s *Service) Attach(p Pipeline) { s.chat = p }

// settled follows up a change of q from pending: its messages show the
// outcome without buttons.
func (s *Service) settled(ctx context.Context, q Question) {
	s.o.Logger.Info("question settled", "question_id", q.ID, "status", q.Status, "by", q.AnsweredBy, "how", q.How)
	if s.o.Messages != nil {
		s.chat.EditDecisions(ctx, s.o.Messages, Kind, q.ID, func(bot.DecisionMessage) string { return outcomeText(q) })
	}
}

// resume lets the parked run of q's session go on, for the person asked,
// so the resumed run can ask them again.
func (s *Service) resume(ctx context.Context, q Question) {
	if q.Session != "" {
		s.chat.Resume(ctx, q.Session, q.Chat, q.Asker)
	}
}

// expire turns pending question q, whose time is up, into expired and
// edits its messages, resuming its run unless the caller is that run;
// when an answer won the race, that answer stands. It returns the
// question as it is afterwards and whether this call expired it.
func (s *Service) expire(ctx context.Context, q Question, resume bool) (Question, bool, error) {
	after, changed, err := s.o.Store.DecideQuestion(ctx, q.ID, Outcome{Status: StatusExpired, By: "system"})
	if err != nil {
		return q, false, fmt.Errorf("expire question %s: %w", q.ID, err)
	}
	if changed {
		s.settled(ctx, after)
		if resume {
			s.resume(ctx, after)
		}
	}
	return after, changed, nil
}
