package bot

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// withinLimits applies the per-user and per-chat rate limits. A limited
// sender is told when to try again once per limited period, not on every
// message. When the limiter itself fails the message goes through: Redis
// trouble must not silence the bot.
func (r *Router) withinLimits(ctx context.Context, in channels.Inbound, log *slog.Logger) bool {
	if r.opts.Limiter == nil {
		return true
	}
	checks := []struct {
		scope, key string
		rate       Rate
	}{
		{"user", "rl:user:" + in.Identity(), r.opts.Limits.User},
		{"chat", "rl:chat:" + in.Address().String(), r.opts.Limits.Chat},
	}
	for _, c := range checks {
		if c.rate.Count <= 0 {
			continue
		}
		ok, retry, err := r.opts.Limiter.Allow(ctx, c.key, c.rate)
		if err != nil {
			// Redis is down: the store logs the outage once.
			log.Debug("rate limiter unavailable; letting the message through", "scope", c.scope, "err", err)
			continue
		}
		if ok {
			continue
		}
		r.opts.Metrics.RateLimited.WithLabelValues(c.scope).Inc()
		log.Info("rate limited", "scope", c.scope, "retry_after_ms", retry.Milliseconds())
		if r.shouldNotice(ctx, "notice:rl:"+c.scope+":"+in.Identity(), c.rate.Per) {
			who := "You're"
			if c.scope == "chat" {
				who = "This chat is"
			}
			r.notify(ctx, in, fmt.Sprintf("%s sending messages faster than I can take them (limit %d per %s). Try again in %s.",
				who, c.rate.Count, humanDuration(c.rate.Per), humanDuration(retry)))
		}
		return false
	}
	return true
}

// shouldNotice reports whether a one-time notice under key is due.
func (r *Router) shouldNotice(ctx context.Context, key string, ttl time.Duration) bool {
	if r.opts.Notice == nil {
		return true
	}
	first, err := r.opts.Notice.FirstSeen(ctx, key, ttl)
	return err != nil || first
}

// humanDuration renders d for people: "12s", "3m", "1h".
func humanDuration(d time.Duration) string {
	switch {
	case d <= time.Second:
		return "1s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int((d+time.Second-1)/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int((d+time.Minute-1)/time.Minute))
	}
	return fmt.Sprintf("%dh", int((d+time.Hour-1)/time.Hour))
}
