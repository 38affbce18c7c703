package bot

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
)

// stopWindow is how many of a session's newest messages the stop looks at
// to find where the stopped turn ends: a turn's open step and the messages
// people sent meanwhile are among them.
const stopWindow = 200

// stopRecordTimeout bounds recording a stop: the run's own context is
// cancelled by then.
const stopRecordTimeout = 10 * time.Second

// stopped records that by stopped the run of j, which started at start:
// the background processes the turn started are killed, each tool call it
// left without a result gets one saying it was stopped, a note tells the
// model on its next turn that the request was stopped (a user message in
// its view, so it does not take it for words of its own), and the chat is
// told "⏹ Stopped by <by>." through the outbox, stored as a notice with
// its row as failRun does. The note and the notice go right after the
// stopped turn: messages sent meanwhile move behind them and are answered
// by the runs they queued. A session so recorded is finished: recovery
// does not run the stopped turn again.
func (r *Router) stopped(ctx context.Context, j laneJob, by string, start time.Time) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), stopRecordTimeout)
	defer cancel()
	if r.opts.StopProcesses != nil {
		if n := r.opts.StopProcesses(j.Session, start); n > 0 {
			r.log.Info("stopped turn's background processes killed", "session", j.Session, "count", n)
		}
	}
	id := ShortID()
	text := fmt.Sprintf("⏹ Stopped by %s.", by)
	note := agentcore.Note("stopped:"+id, fmt.Sprintf(
		"[Stopped] %s stopped the request above before it was answered; what was running for it was cancelled. Do not go on with it unless asked again.", by))
	notice := agentcore.Notice("stopped:"+id, text)
	// The answer shown so far keeps what it said, and says it was stopped.
	out := OutboxMessage{To: j.To, Text: text, ReplyTo: j.ReplyTo, Replaces: j.live.Finish(ctx)}
	if said := j.live.Said(); said != "" && len(out.Replaces) > 0 {
		out.Text = said + "\n\n" + text
	}
	after, fill, err := r.stopPoint(ctx, j.Session, by)
	if err == nil {
		var seq int64
		if seq, _, err = r.opts.History.Insert(ctx, j.Session, after, append(fill, note)...); err == nil {
			_, _, err = r.out.storeReply(ctx, j.Session, seq, notice, out)
		}
	}
	if err == nil {
		return
	}
	r.log.Warn("record stop in its place failed; recording it at the end", "session", j.Session, "err", err)
	if _, err := r.opts.History.Append(ctx, j.Session, append(fill, note)...); err != nil && !errors.Is(err, agentcore.ErrDuplicate) {
		r.log.Error("record stop note failed", "session", j.Session, "err", err)
	}
	if _, err := r.out.appendReply(ctx, j.Session, notice, out); err != nil {
		r.log.Error("record stop failed; telling the chat anyway", "session", j.Session, "err", err)
		r.send(ctx, out)
	}
}

// stopPoint finds where the note of a stopped turn goes in session: after
// its open step's last result, with a result for each call left without
// one (fill); else after its last step when it took any (every message
// after that was sent meanwhile); else after the first of the trailing
// user messages, the one the turn answered (those after it were sent
// meanwhile).
func (r *Router) stopPoint(ctx context.Context, session, by string) (after int64, fill []agentcore.Message, err error) {
	msgs, err := r.opts.History.Load(ctx, session, stopWindow)
	if err != nil {
		return 0, nil, fmt.Errorf("load session: %w", err)
	}
	if step, missing, at := openStep(msgs); len(missing) > 0 {
		for _, c := range step.ToolCalls {
			if missing[c.ID] {
				fill = append(fill, agentcore.Message{Role: agentcore.RoleTool, ToolCallID: c.ID, ToolName: c.Name,
					Content: "stopped by " + by + " before it finished; the command and its child processes were killed", IsError: true})
			}
		}
		return at, fill, nil
	}
	i := len(msgs)
	for i > 0 && msgs[i-1].Role == agentcore.RoleUser {
		i--
	}
	switch {
	case i == len(msgs) && i > 0: // no message waits: the note goes last
		return msgs[i-1].Seq, nil, nil
	case i == len(msgs):
		return 0, nil, errors.New("the session is empty")
	case i > 0 && !isFinal(msgs[i-1]): // the turn took steps
		return msgs[i-1].Seq, nil, nil
	}
	return msgs[i].Seq, nil, nil
}

// isFinal reports whether m ends a turn: an assistant message that calls
// no tools (a reply, a note or a notice).
func isFinal(m agentcore.Message) bool {
	return m.Role == agentcore.RoleAssistant && len(m.ToolCalls) == 0
}

// openStep finds the newest assistant message in msgs whose tool calls
// lack results, the ids of those calls, and the seq of the step's last
// stored message (the call's, or its last result's); missing is empty
// when no call lacks a result.
func openStep(msgs []agentcore.Message) (step agentcore.Message, missing map[string]bool, at int64) {
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if m.Role != agentcore.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		missing = map[string]bool{}
		for _, c := range m.ToolCalls {
			missing[c.ID] = true
		}
		at = m.Seq
		for _, n := range msgs[i+1:] {
			if n.Role == agentcore.RoleTool && missing[n.ToolCallID] {
				delete(missing, n.ToolCallID)
				at = max(at, n.Seq)
			}
		}
		return m, missing, at
	}
	return agentcore.Message{}, nil, 0
}
