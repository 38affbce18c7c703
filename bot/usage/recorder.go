package usage

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/tools"
)

// DefaultWriteTimeout bounds the write of one call's record.
const DefaultWriteTimeout = 10 * time.Second

// Options configure a Recorder. Store is required.
type Options struct {
	Store Store
	// Prices give each call its cost; a model without a price is
	// recorded with none.
	Prices agentcore.Prices
	// Metrics count the tokens and costs; nil: a set of their own.
	Metrics *Metrics
	Logger  *slog.Logger
	// WriteTimeout bounds the write of one record (default
	// DefaultWriteTimeout).
	WriteTimeout time.Duration
	// Now is the clock of the periods /usage shows (default time.Now).
	Now func() time.Time
}

// Recorder records every model call's usage: it is the agents' Meter
// (with the budgets' after it, in an agentcore.Meters) and answers
// /usage and the usage API from what it recorded.
type Recorder struct {
	o   Options
	log *slog.Logger
}

var _ agentcore.Meter = (*Recorder)(nil)

// NewRecorder returns a Recorder on o.Store.
func NewRecorder(o Options) *Recorder {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Metrics == nil {
		o.Metrics = NewMetrics(nil)
	}
	if o.WriteTimeout <= 0 {
		o.WriteTimeout = DefaultWriteTimeout
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Recorder{o: o, log: o.Logger}
}

// Admit implements agentcore.Meter: recording never refuses a call.
func (r *Recorder) Admit(context.Context, agentcore.MeteredCall) error { return nil }

// Record implements agentcore.Meter: it stores the call's usage, under a
// context shutdown does not cancel (the tokens were spent), bounded by
// the write timeout, and counts it in the metrics. A write that fails is
// logged and the run goes on: a lost record must not cost the answer.
func (r *Recorder) Record(ctx context.Context, c agentcore.MeteredCall, u agentcore.Usage) {
	rec := recordOf(c)
	rec.At = r.o.Now()
	var fixed []string
	rec.Tokens, fixed = sanitize(u)
	if len(fixed) > 0 {
		r.log.Warn("model reported negative or absurd usage; recorded as 0 or capped",
			"agent", rec.Agent, "model", rec.Model, "session", rec.Session, "kinds", fixed,
			"input", u.InputTokens, "output", u.OutputTokens, "cache_read", u.CacheReadTokens,
			"cache_write", u.CacheWriteTokens, "cap", MaxTokensPerCall)
	}
	var capped bool
	rec.CostMicros, capped = costMicros(r.o.Prices, rec.Model, rec.Tokens)
	if capped {
		r.log.Warn("a call's cost is not a sane number (check llm.prices); recorded capped or unpriced",
			"agent", rec.Agent, "model", rec.Model)
	}
	r.o.Metrics.observe(rec)
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), r.o.WriteTimeout)
	defer cancel()
	if err := r.o.Store.InsertUsage(wctx, rec); err != nil {
		r.log.Error("could not record a model call's usage; /usage and the usage API will miss it",
			"agent", rec.Agent, "model", rec.Model, "session", rec.Session, "tokens", rec.Tokens.All(), "err", err)
	}
}

// recordOf says whose call c is: the person who started the run, its
// chat, its agent and model, and the job its session works for — a job's
// own session, or a subagent's or teammate's working for one.
func recordOf(c agentcore.MeteredCall) Record {
	session := c.Session
	if session == "" {
		session = c.Call.Session
	}
	rec := Record{Identity: c.Call.UserID, Agent: c.Call.Agent, Model: c.Model, Session: session}
	if rec.Agent == "" {
		rec.Agent = tools.AgentOf(session)
	}
	if c.Call.Channel != "" && c.Call.ChatID != "" {
		rec.Chat = c.Call.Channel + ":" + c.Call.ChatID
	}
	if job, ok := strings.CutPrefix(tools.OriginOf(session), jobScopePrefix); ok {
		rec.Job = job
	}
	return rec
}

// jobScopePrefix starts the session scope of a job's runs (bot/jobs
// JobSession: agent/job:<name>).
const jobScopePrefix = "job:"
