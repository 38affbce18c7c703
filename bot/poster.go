package bot

import (
	"context"
	"log/slog"
	"strings"

	"github.com/switchboard-chat/switchboard/channels"
)

// poster writes messages through the outbox and edits or acknowledges
// them through the channels. Router, approvals and access requests share
// one.
type poster struct {
	outbox   Outbox
	channels map[string]channels.Channel
	nudge    func()
	scrub    func(string) string
	log      *slog.Logger
}

// send queues m for delivery and returns its outbox id (0 on failure,
// which is logged).
func (p *poster) send(ctx context.Context, m OutboxMessage) int64 {
	m.Text = p.scrub(m.Text)
	id, err := p.outbox.Enqueue(ctx, m)
	if err != nil {
		p.log.Error("outbox enqueue failed", "to", m.To.String(), "err", err)
		return 0
	}
	if p.nudge != nil {
		p.nudge()
	}
	return id
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
