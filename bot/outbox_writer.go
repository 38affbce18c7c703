package bot

import (
	"context"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"strings"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
)

// outboxWriter is the pipeline's outbound side: it writes replies and
// notices to the outbox, handing the rows written claimed to the
// dispatcher, and edits delivered messages and answers presses through
// the channels. Router, approvals and access requests share one.
type outboxWriter struct {
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
func (w *outboxWriter) send(ctx context.Context, m OutboxMessage) int64 {
	return w.sendStored(ctx, m, nil)
}

// sendStored is send, calling stored with the row's id once the row is
// stored and before this replica can deliver it — so that whatever refers
// to the message (the approval it asks for) exists before anyone can
// answer it.
func (w *outboxWriter) sendStored(ctx context.Context, m OutboxMessage, stored func(id int64)) int64 {
	m = w.scrubbed(m)
	row, err := w.write(ctx, func(claim Claim) (OutboxMessage, bool, error) {
		row, claimed, err := w.outbox.EnqueueClaimed(ctx, m, claim)
		if err == nil && stored != nil {
			stored(row.ID)
		}
		return row, claimed, err
	})
	if err != nil {
		w.log.Error("outbox enqueue failed", "to", m.To.String(), "err", err)
		return 0
	}
	return row.ID
}

// storeReply stores a final reply in its session and its delivery m in one
// transaction (Outbox.InsertReply). It returns what
// agentcore.History.Insert does.
func (w *outboxWriter) storeReply(ctx context.Context, session string, after int64, reply agentcore.Message, m OutboxMessage) (int64, int, error) {
	return w.writeReply(ctx, func(claim Claim) (StoredReply, error) {
		return w.outbox.InsertReply(ctx, session, after, reply, w.scrubbed(m), claim)
	})
}

// appendReply stores reply at the end of its session and its delivery m
// together (Outbox.AppendReply), and returns the reply's seq.
func (w *outboxWriter) appendReply(ctx context.Context, session string, reply agentcore.Message, m OutboxMessage) (int64, error) {
	seq, _, err := w.writeReply(ctx, func(claim Claim) (StoredReply, error) {
		return w.outbox.AppendReply(ctx, session, reply, w.scrubbed(m), claim)
	})
	return seq, err
}

// writeReply writes a reply and its row through store (see write); the
// row's send continues the run's trace.
func (w *outboxWriter) writeReply(ctx context.Context, store func(Claim) (StoredReply, error)) (int64, int, error) {
	var out StoredReply
	_, err := w.write(ctx, func(claim Claim) (OutboxMessage, bool, error) {
		var err error
		out, err = store(claim)
		out.Row.Trace = trace.SpanContextFromContext(ctx)
		return out.Row, out.Claimed, err
	})
	return out.Seq, out.Moved, err
}

// write stores a row through store, claimed for the dispatcher when it
// has room, then hands the row to the dispatcher, or nudges it to claim
// the row when it had none.
func (w *outboxWriter) write(ctx context.Context, store func(Claim) (row OutboxMessage, claimed bool, err error)) (OutboxMessage, error) {
	claim, reserved := w.reserve(ctx)
	row, claimed, err := store(claim)
	switch {
	case reserved:
		w.dispatch.handOver(row, claimed && err == nil)
	case err == nil && w.nudge != nil:
		w.nudge()
	}
	return row, err
}

// reserve asks the dispatcher for room for a row written claimed.
func (w *outboxWriter) reserve(ctx context.Context) (Claim, bool) {
	if w.dispatch == nil {
		return Claim{}, false
	}
	return w.dispatch.reserve(ctx)
}

func (w *outboxWriter) scrubbed(m OutboxMessage) OutboxMessage {
	m.Text = w.scrub(m.Text)
	return m
}

// edit replaces a delivered message's text and removes its buttons.
func (w *outboxWriter) edit(ctx context.Context, to channels.Address, messageID, text string) {
	w.editWith(ctx, to, messageID, text, nil)
}

// editWith replaces messageID's text and buttons (nil removes them).
func (w *outboxWriter) editWith(ctx context.Context, to channels.Address, messageID, text string, buttons [][]channels.Button) {
	if messageID == "" {
		return
	}
	ed, ok := w.channels[to.Platform].(channels.Editor)
	if !ok {
		return
	}
	if err := ed.Edit(ctx, to, messageID, channels.Outbound{To: to, Text: w.scrub(text), Buttons: buttons}); err != nil {
		w.log.Warn("edit failed", "to", to.String(), "message_id", messageID, "err", err)
	}
}

// answer acknowledges a button press, showing text to the presser.
func (w *outboxWriter) answer(ctx context.Context, in channels.Inbound, text string) {
	pa, ok := w.channels[in.Platform].(channels.PressAnswerer)
	if !ok || in.Press == nil {
		return
	}
	if err := pa.AnswerPress(ctx, *in.Press, text); err != nil {
		w.log.Warn("answer press failed", "platform", in.Platform, "err", err)
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
