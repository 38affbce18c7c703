package retention

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// confirmWord is what /forget needs after it to delete: a destructive
// command never runs from one word typed by mistake.
const confirmWord = "confirm"

// Replies of the commands.
const (
	forgetRefused = "Only admins can make me forget a chat; ask one of them, or /reset for a fresh start."
	forgetUsage   = "Usage: /forget shows what this chat holds; /forget " + confirmWord + " deletes it."
)

// Options configure Commands.
type Options struct {
	// Store keeps the conversations.
	Store Store
	// RemoveFiles, when set, deletes the copies of attachments a session
	// left in its workspace on this replica's disk; /forget calls it for
	// each of the chat's sessions once the database forgot them.
	RemoveFiles func(session string) error
	Logger      *slog.Logger
}

// Commands returns /reset and /forget.
func Commands(o Options) []bot.Command {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	c := &commands{store: o.Store, removeFiles: o.RemoveFiles, log: o.Logger}
	return []bot.Command{
		{Name: "reset", Help: "a fresh start: I stop seeing this conversation's earlier messages (they are kept)", Run: c.reset},
		{Name: "forget", Help: "admins: delete this chat's history, memory and attachments (/forget " + confirmWord + ")", Run: c.forget},
	}
}

type commands struct {
	store       Store
	removeFiles func(session string) error
	log         *slog.Logger
}

// reset answers /reset. Anyone allowed to talk here may start afresh:
// nothing is deleted, and the reset is audited.
func (c *commands) reset(ctx context.Context, _ bot.Host, in channels.Inbound, _ string) string {
	scope := in.Address().String()
	// A shutdown meanwhile must not cancel the write between the mark and
	// its audit record; the person is told either way.
	n, err := c.store.ResetScope(context.WithoutCancel(ctx), scope, in.Identity())
	if err != nil {
		c.log.Error("/reset failed", "chat", scope, "error", err)
		return "Could not reset this conversation; try again."
	}
	if n == 0 {
		return "Nothing to reset: this conversation has no messages yet."
	}
	c.log.Info("conversation reset", "chat", scope, "by", in.Identity(), "sessions", n)
	return "Fresh start: I no longer see this conversation's earlier messages. They are kept; an admin can delete them with /forget."
}

// forget answers /forget: admins only, and only with confirmWord; without
// it, what would go.
func (c *commands) forget(ctx context.Context, host bot.Host, in channels.Inbound, args string) string {
	if !host.IsAdmin(in.Identity()) {
		return forgetRefused
	}
	chat := ChatKey(in.Address())
	switch strings.TrimSpace(args) {
	case "":
		f, err := c.store.ChatFootprint(ctx, chat)
		if err != nil {
			c.log.Error("/forget could not count the chat", "chat", chat, "error", err)
			return "Could not read this chat; try again."
		}
		if f.Empty() {
			return "This chat holds nothing to forget."
		}
		return fmt.Sprintf("This chat holds %s. Send /forget %s to delete it all; this cannot be undone. The audit log keeps who decided what.",
			describe(f), confirmWord)
	case confirmWord:
		return c.forgetNow(context.WithoutCancel(ctx), chat, in.Identity())
	default:
		return forgetUsage
	}
}

// forgetNow deletes what chat holds, as asked by actor, and says what went.
func (c *commands) forgetNow(ctx context.Context, chat, actor string) string {
	f, sessions, err := c.store.ForgetChat(ctx, chat, actor)
	if err != nil {
		c.log.Error("/forget failed", "chat", chat, "error", err)
		return "Could not forget this chat; nothing was deleted. Try again."
	}
	c.log.Info("chat forgotten", "chat", chat, "by", actor,
		"messages", f.Messages, "memory", f.Memory, "attachments", f.Attachments)
	reply := "Forgotten: deleted " + describe(f) + "."
	if c.removeFiles == nil {
		return reply
	}
	failed := 0
	for _, s := range sessions {
		if err := c.removeFiles(s); err != nil {
			failed++
			c.log.Error("/forget could not remove a workspace's attachments", "session", s, "error", err)
		}
	}
	if failed > 0 {
		reply += fmt.Sprintf(" The attachments in %s could not be removed; the log says why.", plural(failed, "workspace"))
	}
	return reply
}

// describe says what a Footprint counts.
func describe(f Footprint) string {
	return fmt.Sprintf("%s, %s and %s", plural(f.Messages, "message"), plural(f.Memory, "memory document"),
		plural(f.Attachments, "attachment"))
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}
