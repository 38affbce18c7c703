package retention

import (
	"context"
	"log/slog"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// Leaderships of the replica that prunes each kind of record.
const (
	messagesPruneLock = "messages:prune"
	auditPruneLock    = "audit:prune"
)

// PruneOptions configure Prunings.
type PruneOptions struct {
	// Store prunes; when it is also a bot.LeaderLock, one replica at a
	// time does.
	Store Pruner
	// Messages and Audit are how long each is kept; 0 keeps it.
	Messages, Audit time.Duration
	// Every is how often a pass runs; 0 means bot.PruneEvery.
	Every  time.Duration
	Logger *slog.Logger
}

// Prunings are the hourly passes retention: asks for, none for a period
// of 0 (keep).
func Prunings(o PruneOptions) []bot.Pruning {
	if o.Every <= 0 {
		o.Every = bot.PruneEvery
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	var out []bot.Pruning
	add := func(what, lock string, keep time.Duration, prune func(context.Context, time.Time, int) (int, error)) {
		if keep <= 0 {
			return
		}
		out = append(out, bot.Pruning{What: what, Lock: lock, Keep: keep, Every: o.Every, Store: o.Store,
			Prune: func(ctx context.Context, keep time.Duration, limit int) (int, error) {
				return prune(ctx, time.Now().Add(-keep), limit)
			}, Log: o.Logger})
	}
	add("messages", messagesPruneLock, o.Messages, o.Store.PruneMessages)
	add("audit log", auditPruneLock, o.Audit, o.Store.PruneAudit)
	return out
}
