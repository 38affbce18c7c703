package slack

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels"
)

// Start checks the bot token with auth.test and delivers events to h until
// ctx ends, then returns nil. With an app token it holds a Socket Mode
// connection, reconnecting with backoff when the connection drops; with
// only a signing secret it serves Webhook. While Slack is unreachable it
// retries, logging once per failure streak, and Ready reports the last
// error. It returns an error only when Slack rejects a token.
//
// Events are handled one at a time, in order. An event is confirmed to
// Slack only after h returned nil (it is stored): its Socket Mode envelope
// is acknowledged then, or its Events API request answered 200. When h
// fails, or the channel stops before the event was handled, the envelope
// stays unacknowledged (the request is answered 503), and Slack delivers
// the event again. Up to 256 events wait for the handler; beyond that
// Socket Mode waits too, and webhooks answer 503.
func (c *Channel) Start(ctx context.Context, h channels.Handler) error {
	if h == nil {
		return errors.New("slack: Start needs a handler")
	}
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("slack: Start called while already running")
	}
	defer c.running.Store(false)
	defer func() {
		c.health.Set(errStopped)
		c.transport.CloseIdleConnections()
	}()
	c.health.Set(errors.New("slack: connecting"))

	if err := c.connect(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { c.work(ctx, h) })
	var err error
	if c.opts.AppToken != "" {
		err = c.runSocket(ctx)
	} else {
		c.health.Succeeded("connect")
		<-ctx.Done()
	}
	cancel()
	wg.Wait()
	return err
}

// connect calls auth.test until it succeeds, backing off between attempts,
// and remembers who the bot is; a rejected token ends it.
func (c *Channel) connect(ctx context.Context) error {
	return channels.Reconnect{Health: c.health, Op: "auth.test", Min: c.opts.RetryMin, Max: c.opts.RetryMax,
		Fatal: func(err error) error {
			if isAuthError(err) {
				return fmt.Errorf("slack: the bot token was rejected (%w); check slack.bot_token (the xoxb- token under OAuth & Permissions)", err)
			}
			return nil
		}}.Run(ctx, c.authTest)
}

// authTest asks Slack who the bot is.
func (c *Channel) authTest(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	r, err := c.api.AuthTestContext(ctx)
	if err != nil {
		return c.redact(err)
	}
	if r.UserID == "" {
		return errors.New("auth.test named no bot user; use the bot token (xoxb-), not a user token")
	}
	c.mu.Lock()
	c.bot = identity{userID: r.UserID, botID: r.BotID, teamID: r.TeamID}
	c.mu.Unlock()
	c.log.Info("slack authenticated", "bot_user_id", r.UserID, "bot_id", r.BotID, "team_id", r.TeamID)
	return nil
}

// whoami returns the bot's identity.
func (c *Channel) whoami() identity {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bot
}

// queued is an event waiting for the handler, with what confirms it to
// Slack: done is called once with the handler's result (nil: stored).
type queued struct {
	in   channels.Inbound
	done func(err error)
}

// errStopping answers the events still queued when Start stops.
var errStopping = errors.New("slack: channel stopping; event not handled")

// work hands queued events to h, one at a time, until ctx ends. Events
// still queued then are answered with errStopping, so none is confirmed.
// A failure of h is logged once per streak of failing events.
func (c *Channel) work(ctx context.Context, h channels.Handler) {
	failures := 0
	defer c.drain()
	for {
		select {
		case <-ctx.Done():
			return
		case q := <-c.inbox:
			err := c.deliver(ctx, h, q.in)
			q.done(err)
			switch {
			case err != nil && ctx.Err() == nil:
				failures++
				if failures == 1 {
					c.log.Warn("slack event not stored (storage unavailable?); left unconfirmed so that Slack delivers it again",
						"external_id", q.in.ExternalID, "error", err)
				} else {
					c.log.Debug("slack event not stored", "external_id", q.in.ExternalID, "error", err)
				}
			case err == nil && failures > 0:
				c.log.Info("slack events stored again", "failed", failures)
				failures = 0
			}
		}
	}
}

// drain answers the events left in the queue with errStopping.
func (c *Channel) drain() {
	for {
		select {
		case q := <-c.inbox:
			q.done(errStopping)
		default:
			return
		}
	}
}

// deliver names the sender and calls h, returning its result. A panic in h
// is logged and counts as handled: the event would only panic again.
func (c *Channel) deliver(ctx context.Context, h channels.Handler, in channels.Inbound) (err error) {
	defer func() {
		if r := recover(); r != nil {
			c.log.Error("slack event handler panicked; event dropped", "external_id", in.ExternalID, "panic", r)
			err = nil
		}
	}()
	if ctx.Err() != nil {
		return errStopping
	}
	in.UserName = c.userName(ctx, in.UserID)
	return h(ctx, in)
}

// enqueue queues an event for the handler, waiting while the queue is
// full until ctx ends. done is called with the handler's result, unless
// enqueue returns false.
func (c *Channel) enqueue(ctx context.Context, in channels.Inbound, done func(error)) bool {
	select {
	case c.inbox <- &queued{in: in, done: done}:
		return true
	case <-ctx.Done():
		return false
	}
}

// Ready returns nil while the channel is connected (Socket Mode) or
// authenticated (Events API), else the reason it is not.
func (c *Channel) Ready(ctx context.Context) error { return c.health.Ready(ctx) }

// authErrors are the Slack errors that mean a token is wrong for good.
var authErrors = map[string]bool{
	"invalid_auth": true, "not_authed": true, "account_inactive": true, "token_revoked": true,
	"token_expired": true, "not_allowed_token_type": true, "missing_scope": true, "team_access_not_granted": true,
}

// isAuthError reports whether err says a token is not accepted.
func isAuthError(err error) bool {
	var se slack.SlackErrorResponse
	return errors.As(err, &se) && authErrors[se.Err]
}
