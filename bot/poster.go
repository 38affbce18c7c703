package bot

import (
	"context"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// poster writes messages through the outbox and edits or acknowledges
// them through the channels. Router, approvals and access requests share
// one.
type poster struct {
	outbox   Outbox
	channels map[string]channels.Channel
	nudge    func()
	// dispatch, when set, takes rows written already claimed for it, so
	// they go out without a round trip to claim them.
	dispatch *Dispatcher
	scrub    func(string) string
	log      *slog.Logger
}

// send queues m for delivery and returns its outbox id (0 on failure,
// which is logged).
func (p *poster) send(ctx context.Context, m OutboxMessage) int64 {
	return p.sendStored(ctx, m, nil)
}

// sendStored is send, calling stored with the row's id once the row is
// stored and before this replica can deliver it — so that whatever refers
// to the message (the approval it asks for) exists before anyone can
// answer it.
func (p *poster) sendStored(ctx context.Context, m OutboxMessage, stored func(id int64)) int64 {
	m.Text = p.scrub(m.Text)
	if claim, ok := p.reserve(ctx); ok {
		row, claimed, err := p.outbox.EnqueueClaimed(ctx, m, claim)
		if err == nil && stored != nil {
			stored(row.ID)
		}
		p.dispatch.handOver(row, claimed && err == nil)
		if err != nil {
			p.log.Error("outbox enqueue failed", "to", m.To.String(), "err", err)
			return 0
		}
		return row.ID
	}
	id, err := p.outbox.Enqueue(ctx, m)
	if err != nil {
		p.log.Error("outbox enqueue failed", "to", m.To.String(), "err", err)
		return 0
	}
	if stored != nil {
		stored(id)
	}
	if p.nudge != nil {
		p.nudge()
	}
	return id
}

// reserve asks the dispatcher for room for a row written claimed.
func (p *poster) reserve(ctx context.Context) (Claim, bool) {
	if p.dispatch == nil {
		return Claim{}, false
	}
	return p.dispatch.reserve(ctx)
}

// storeReply stores a final reply in its session and its delivery m
// together: in one transaction when the outbox is a ReplyWriter, handed to
// the dispatcher without a claim when it has room. It returns what
// agentcore.History.Insert does.
func (p *poster) storeReply(ctx context.Context, h agentcore.History, session string, after int64, reply agentcore.Message, m OutboxMessage) (int64, int, error) {
	rw, ok := p.outbox.(ReplyWriter)
	if !ok {
		seq, moved, err := h.Insert(ctx, session, after, reply)
		if err == nil {
			m.Session, m.SourceSeq = session, seq
			// A stored reply is delivered even when shutdown began meanwhile.
			p.send(context.WithoutCancel(ctx), m)
		}
		return seq, moved, err
	}
	return p.writeReply(ctx, func(claim Claim) (StoredReply, error) {
		return rw.InsertReply(ctx, session, after, reply, p.scrubbed(m), claim)
	})
}

// appendReply stores reply at the end of its session and its delivery m
// together, as storeReply does, and returns the reply's seq.
func (p *poster) appendReply(ctx context.Context, h agentcore.History, session string, reply agentcore.Message, m OutboxMessage) (int64, error) {
	rw, ok := p.outbox.(ReplyWriter)
	if !ok {
		seq, err := h.Append(ctx, session, reply)
		if err == nil {
			m.Session, m.SourceSeq = session, seq
			p.send(context.WithoutCancel(ctx), m)
		}
		return seq, err
	}
	seq, _, err := p.writeReply(ctx, func(claim Claim) (StoredReply, error) {
		return rw.AppendReply(ctx, session, reply, p.scrubbed(m), claim)
	})
	return seq, err
}

// writeReply runs write with a claim when the dispatcher has room, and
// hands it the row written.
func (p *poster) writeReply(ctx context.Context, write func(Claim) (StoredReply, error)) (int64, int, error) {
	claim, reserved := p.reserve(ctx)
	out, err := write(claim)
	switch {
	case reserved:
		out.Row.Trace = trace.SpanContextFromContext(ctx)
		p.dispatch.handOver(out.Row, out.Claimed && err == nil)
	case err == nil && p.nudge != nil:
		p.nudge()
	}
	return out.Seq, out.Moved, err
}

func (p *poster) scrubbed(m OutboxMessage) OutboxMessage {
	m.Text = p.scrub(m.Text)
	return m
}

// edit replaces a delivered message's text and removes its buttons.
func (p *poster) edit(ctx context.Context, to channels.Address, messageID, text string) {
	if messageID == "" {
		return
	}
	ed, ok := p.channels[to.Platform].(channels.Editor)
	if !ok {
		return
	}
	if err := ed.Edit(ctx, to, messageID, channels.Outbound{To: to, Text: p.scrub(text)}); err != nil {
		p.log.Warn("edit failed", "to", to.String(), "message_id", messageID, "err", err)
	}
}

// answer acknowledges a button press, showing text to the presser.
func (p *poster) answer(ctx context.Context, in channels.Inbound, text string) {
	pa, ok := p.channels[in.Platform].(channels.PressAnswerer)
	if !ok || in.Press == nil {
		return
	}
	if err := pa.AnswerPress(ctx, *in.Press, text); err != nil {
		p.log.Warn("answer press failed", "platform", in.Platform, "err", err)
	}
}

// directAddress is where a person is reached one to one: on Telegram and
// the console the private chat id is the user id.
func directAddress(identity string) (channels.Address, bool) {
	platform, user, ok := strings.Cut(identity, ":")
	if !ok || platform == "" || user == "" {
		return channels.Address{}, false
	}
	return channels.Address{Platform: platform, ChatID: user}, true
}

// codeBlock renders s as a Markdown code block whose fence cannot be closed
// by backticks inside s.
func codeBlock(s string) string {
	fence := "```"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	return fence + "\n" + s + "\n" + fence
}
