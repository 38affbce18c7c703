package audit

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Default and most entries /audit shows: a chat message, not a report.
const (
	DefaultEntries = 10
	MaxEntries     = 50
)

// refused answers a non-admin's /audit: the log names people and commands.
const refused = "Only admins can read the audit log; ask one of them."

// Commands returns /audit, reading store; log may be nil.
func Commands(store Store, log *slog.Logger) []bot.Command {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	c := &command{store: store, log: log}
	return []bot.Command{{
		Name: "audit",
		Help: fmt.Sprintf("admins: the last decisions — who, what, when, outcome (/audit N, up to %d)", MaxEntries),
		Run:  c.run,
	}}
}

type command struct {
	store Store
	log   *slog.Logger
}

// run answers "/audit [N]".
func (c *command) run(ctx context.Context, host bot.Host, in channels.Inbound, args string) string {
	if !host.IsAdmin(in.Identity()) {
		return refused
	}
	n, err := count(args)
	if err != nil {
		return err.Error()
	}
	entries, err := c.store.Audit(ctx, n)
	if err != nil {
		c.log.Error("/audit could not read the audit log", "error", err)
		return "Could not read the audit log; try again."
	}
	if len(entries) == 0 {
		return "The audit log is empty."
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Last %d decisions, newest first (UTC):\n", len(entries))
	for _, e := range entries {
		b.WriteString("- " + Line(e) + "\n")
	}
	return b.String()
}

// count reads /audit's argument: none is DefaultEntries; anything but a
// number from 1 to MaxEntries is refused with the reason.
func count(args string) (int, error) {
	if args == "" {
		return DefaultEntries, nil
	}
	n, err := strconv.Atoi(strings.Fields(args)[0])
	if err != nil || n < 1 || n > MaxEntries {
		return 0, fmt.Errorf("Usage: /audit [N], N from 1 to %d (default %d).", MaxEntries, DefaultEntries)
	}
	return n, nil
}
