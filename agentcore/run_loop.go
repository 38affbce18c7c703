package agentcore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// runLoop is the state of one Run: what it has produced so far and where
// it is in the current turn.
type runLoop struct {
	a       *Agent
	in      RunInput
	log     *slog.Logger
	res     RunResult
	maxIter int
	specs   []tools.Spec
	system  string
	turn    int     // model calls in the current turn
	summary Summary // the session's summary, sent before the window
}

// step reads the session and takes the next step of the run: it finishes
// a step stopped mid-way, answers, or calls the model. done is true when
// the run is over, with err its error.
func (r *runLoop) step(ctx context.Context) (done bool, err error) {
	w, err := r.a.window(ctx, r.in.Session)
	if err != nil {
		return true, err
	}
	msgs := r.fit(ctx, w)
	if step, missing, after := pendingStep(msgs); missing != nil {
		return r.resumeStep(ctx, step, missing, after)
	}
	v := view(msgs, r.a.Queue)
	if len(v) == 0 || isFinalReply(v[len(v)-1]) {
		r.res.Idle = r.res.Replies == 0 && r.res.Iterations == 0
		return true, nil
	}
	if r.turn >= r.maxIter {
		text := fmt.Sprintf("I stopped after %d steps without finishing. Ask me to continue, or narrow the request.", r.maxIter)
		return r.finalReply(ctx, v, Message{Role: RoleAssistant, Content: text})
	}
	return r.callModel(ctx, v)
}

// resumeStep runs the tool calls of a step that stopped mid-way (crash,
// restart, a parked approval).
func (r *runLoop) resumeStep(ctx context.Context, step Message, missing map[string]bool, after int64) (done bool, err error) {
	w, err := r.a.runTools(ctx, r.in, step.ToolCalls, missing, after)
	if err != nil || w != nil {
		r.res.Waiting = w
		return r.end(err)
	}
	return false, nil
}

// callModel shows the model the view v and stores what it answers: a
// final reply, or a step of tool calls, which it then runs.
func (r *runLoop) callModel(ctx context.Context, v []Message) (done bool, err error) {
	refused, err := r.admit(ctx, r.a.Model)
	if err != nil {
		return true, fmt.Errorf("check budgets: %w", err)
	}
	if refused != nil {
		r.log.Info("model call refused", "reason", refused.Reply)
		return r.finalReply(ctx, v, Message{Role: RoleAssistant, Content: refused.Reply})
	}
	r.turn++
	r.res.Iterations++
	start := time.Now()
	resp, err := r.a.chat(ctx, Request{
		Model: r.a.Model, System: r.system, Messages: r.a.withImages(ctx, r.log, r.withSummary(forModel(v))), Tools: r.specs, MaxTokens: r.a.MaxTokens,
	}, r.in.OnText)
	if r.a.ObserveLLM != nil {
		r.a.ObserveLLM(time.Since(start), err)
	}
	if err != nil {
		return true, fmt.Errorf("llm call: %w", err)
	}
	r.res.Model = cmp.Or(resp.Model, r.a.Model)
	r.res.Usage = r.res.Usage.Add(resp.Usage)
	r.record(ctx, r.res.Model, resp.Usage)
	reply := Message{Role: RoleAssistant, Content: resp.Content, ToolCalls: withServerIDs(resp.ToolCalls)}
	if len(reply.ToolCalls) == 0 {
		return r.finalReply(ctx, v, reply)
	}
	seq, _, err := r.a.History.Insert(ctx, r.in.Session, lastSeq(v), reply)
	if err != nil {
		return r.end(fmt.Errorf("record reply: %w", err))
	}
	r.log.Debug("tool calls", "count", len(reply.ToolCalls), "iteration", r.res.Iterations)
	w, err := r.a.runTools(ctx, r.in, reply.ToolCalls, nil, seq)
	if err != nil || w != nil {
		r.res.Waiting = w
		return r.end(err)
	}
	return false, nil
}

// finalReply stores reply, a final answer to the view v, and hands it to
// OnReply. The run is over unless messages arrived while it worked: a
// message stored after this reply queued its own run.
func (r *runLoop) finalReply(ctx context.Context, v []Message, reply Message) (done bool, err error) {
	seq, moved, err := r.a.storeReply(ctx, r.in, lastSeq(v), reply)
	if err != nil {
		return r.end(fmt.Errorf("record reply: %w", err))
	}
	r.a.reply(ctx, r.in, &r.res, reply.Content, seq)
	if moved == 0 {
		return true, nil // nothing arrived meanwhile: the session is answered
	}
	r.turn = 0
	return false, nil
}

// end ends the run on err. ErrConflict means another run wrote to the
// session meanwhile (two replicas ran it while Redis locks were
// unavailable): that run answers, so this one stops quietly.
func (r *runLoop) end(err error) (done bool, _ error) {
	if errors.Is(err, ErrConflict) {
		r.log.Warn("session changed by another run; leaving it to that run", "err", err)
		return true, nil
	}
	return true, err
}

// fit returns the part of w that fits the agent's ContextTokens with the
// run's system prompt, tools and the session's summary (budgetStart), and
// starts a compaction when the window leaves turns out that no summary
// covers.
func (r *runLoop) fit(ctx context.Context, w windowed) []Message {
	msgs, left := w.msgs, w.older
	if r.a.ContextTokens > 0 && len(msgs) > 0 {
		costs := costsFor(r.a.Provider, r.a.Vision)
		budget := r.a.ContextTokens - costs.fixed(r.system, r.specs)
		if w.summary.Text != "" {
			budget -= costs.message(summaryMessage(w.summary))
		}
		if budget < r.a.ContextTokens/4 {
			r.log.Warn("agent.context_tokens leaves little room for history beside the system prompt and tools; raise it",
				"context_tokens", r.a.ContextTokens, "history_tokens", budget)
		}
		start, cut := budgetStart(msgs, budget, costs.message)
		msgs, left = msgs[start:], left || cut
	}
	r.summary = w.summary
	if left && r.a.Compactor != nil && len(msgs) > 0 {
		r.a.Compactor.start(ctx, compactJob{
			session: r.in.Session, call: r.in.Call, before: msgs[0].Seq,
			tokens: cmp.Or(r.a.ContextTokens, DefaultContextTokens), agent: r.a,
		})
	}
	return msgs
}

// withSummary returns msgs with the session's summary before them, when
// it has one.
func (r *runLoop) withSummary(msgs []Message) []Message {
	if r.summary.Text == "" {
		return msgs
	}
	return append([]Message{summaryMessage(r.summary)}, msgs...)
}
