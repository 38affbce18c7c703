// Package messaging lets agents post to chats other than the one they
// answer in: the Messenger behind the message and create_forum_topic tools
// (tools/sessions). A post goes only to a chat the agent serves and only
// through the pipeline's durable outbox (bot.Outbox), so it is delivered
// once like any reply.
//
// Imports flow one way: messaging imports bot (and agentcore, channels,
// tools); bot never imports messaging.
package messaging

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/sessions"
)

// Options wires a Messenger.
type Options struct {
	// Outbox queues the posts; the dispatcher delivers them.
	Outbox bot.Outbox
	// History tells which chats an agent has a conversation in.
	History agentcore.History
	// Channels are the platforms, by name, a post may go to.
	Channels map[string]channels.Channel
	// Bindings are the chats each agent is bound to.
	Bindings []bot.Binding
	// Nudge, when set, wakes the dispatcher after a post is queued.
	Nudge func()
	// Scrub removes secrets from a post's text; nil keeps it as it is.
	Scrub func(string) string
	// Logger receives a line per post; nil discards them.
	Logger *slog.Logger
}

// Messenger lets agents post to other chats (the message and
// create_forum_topic tools): only to chats they serve — the chat of the
// call, a chat they have a conversation in, or one a binding gives them —
// and only through the durable outbox.
type Messenger struct{ o Options }

var _ sessions.Messenger = (*Messenger)(nil)

// New returns a Messenger.
func New(o Options) *Messenger {
	if o.Scrub == nil {
		o.Scrub = func(s string) string { return s }
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Messenger{o: o}
}

// reachable reports whether agent may post to to.
func (m *Messenger) reachable(ctx context.Context, from tools.Call, to channels.Address) (bool, error) {
	if _, ok := m.o.Channels[to.Platform]; !ok {
		return false, nil
	}
	if to.Platform == from.Channel && to.ChatID == from.ChatID {
		return true, nil
	}
	for _, b := range m.o.Bindings {
		if b.Agent == from.Agent && b.Matches(to) {
			return true, nil
		}
	}
	chat := channels.Address{Platform: to.Platform, ChatID: to.ChatID}
	for _, scope := range []channels.Address{to, chat} {
		msgs, err := m.o.History.Load(ctx, agentcore.SessionKey{Agent: from.Agent, Scope: scope.String()}.String(), 1)
		if err != nil {
			return false, err
		}
		if len(msgs) > 0 {
			return true, nil
		}
	}
	return false, nil
}

// Send implements sessions.Messenger.
func (m *Messenger) Send(ctx context.Context, from tools.Call, to, text string) error {
	addr, err := channels.ParseAddress(to)
	if err != nil {
		return fmt.Errorf("%w (%v)", sessions.ErrUnreachable, err)
	}
	ok, err := m.reachable(ctx, from, addr)
	if err != nil {
		return fmt.Errorf("storage unavailable, try again later: %w", err)
	}
	if !ok {
		return sessions.ErrUnreachable
	}
	if _, err := m.o.Outbox.Enqueue(ctx, bot.OutboxMessage{To: addr, Text: m.o.Scrub(text)}); err != nil {
		return fmt.Errorf("queue the message: %w", err)
	}
	m.o.Logger.Info("agent posted to another chat", "agent", from.Agent, "session", from.Session, "to", addr.String())
	if m.o.Nudge != nil {
		m.o.Nudge()
	}
	return nil
}

// CreateTopic implements sessions.Messenger.
func (m *Messenger) CreateTopic(ctx context.Context, from tools.Call, chat, name string) (string, error) {
	addr, err := channels.ParseAddress(chat)
	if err != nil {
		return "", fmt.Errorf("%w (%v)", sessions.ErrUnreachable, err)
	}
	addr.ThreadID = ""
	ok, err := m.reachable(ctx, from, addr)
	if err != nil {
		return "", fmt.Errorf("storage unavailable, try again later: %w", err)
	}
	if !ok {
		return "", sessions.ErrUnreachable
	}
	tc, isTC := m.o.Channels[addr.Platform].(channels.TopicCreator)
	if !isTC {
		return "", sessions.ErrUnsupported
	}
	topic, err := tc.CreateTopic(ctx, addr, name)
	if err != nil {
		return "", err
	}
	m.o.Logger.Info("agent created a forum topic", "agent", from.Agent, "topic", topic.String())
	return topic.String(), nil
}
