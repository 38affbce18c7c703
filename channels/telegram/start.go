package telegram

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
)

var errStopped = errors.New("telegram: stopped")

// Start connects to Telegram and delivers messages and button presses to h
// until ctx ends, then returns nil. While the Bot API is unreachable it
// retries with capped backoff, logging once per failure streak, and Ready
// reports the last error. It returns an error only when Telegram rejects
// the token.
//
// The updates of one getUpdates batch are handled concurrently across chats
// (at most Options.MaxParallelChats at once) and one at a time, in order,
// within a chat, so h must be safe for concurrent use. Telegram learns that
// an update was handled only through the offset of the next getUpdates
// call, and that call waits until h has returned nil for every update of
// the previous batch: when h fails (the update was not stored), the update
// is handed to h again, with backoff, in its chat's lane, until h succeeds
// or ctx ends, and no later getUpdates is issued meanwhile. An update whose
// handling a crash or a stop cut short is not confirmed, so Telegram
// delivers it again. Start returns only after every call of h has returned.
//
// In webhook mode (Options.Webhook) Start polls nothing: it checks the
// token, registers the commands and then lets Webhook hand posted updates
// to h until ctx ends, and hands over the albums whose parts were stored
// (see webhook_albums.go). Every replica runs Start; RegisterWebhook,
// called by one, points Telegram at the webhook.
func (c *Channel) Start(ctx context.Context, h channels.Handler) error {
	if h == nil {
		return errors.New("telegram: Start needs a handler")
	}
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("telegram: Start called while already running")
	}
	defer c.running.Store(false)
	retrying := channels.NewHandleRetry(Platform, c.log, c.opts.RetryMin, c.opts.RetryMax)
	store := channels.Handler(func(ctx context.Context, in channels.Inbound) error {
		return retrying.Do(ctx, h, in)
	})
	c.handler.Store(&store)
	c.inflight.reset()
	defer func() {
		c.setState(errStopped)
		c.transport.CloseIdleConnections()
	}()

	if err := c.connect(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	// The command menu is registered while polling starts, not before it:
	// it only fills the chat's "/" menu, and waiting for it cost every start
	// a round trip to the Bot API.
	var menu sync.WaitGroup
	defer menu.Wait()
	menu.Go(func() { c.registerCommands(ctx) })
	if c.webhookMode() {
		// Updates arrive through Webhook, on every replica, until ctx
		// ends; the leader registers the webhook (RegisterWebhook).
		c.hooks.open(ctx, store)
		var sweep sync.WaitGroup
		sweep.Go(func() { c.sweepAlbums(ctx, store) })
		<-ctx.Done()
		c.hooks.close()
		sweep.Wait()
		c.lanes.wait() // albums being handed over give up
		return nil
	}
	// A poller of its own, starting after the last update handed over in
	// full: a previous Start cut short (leadership lost, with updates
	// fetched but not handled) must not confirm those.
	poller, err := c.newBot(c.inflight.resumeAfter(), c.opts.PollTimeout+15*time.Second)
	if err != nil {
		return err
	}
	poller.Start(ctx)   // polls until ctx ends
	c.albums.waitIdle() // the library no longer dispatches; albums give up
	c.lanes.wait()      // and the lanes drain
	return nil
}

// connect calls getMe and deleteWebhook until they succeed, backing off
// between attempts; a rejected token ends it.
func (c *Channel) connect(ctx context.Context) error {
	return channels.Reconnect{Health: c.health, Op: "connect", Min: c.opts.RetryMin, Max: c.opts.RetryMax,
		Fatal: func(err error) error {
			if errors.Is(err, bot.ErrorUnauthorized) {
				return fmt.Errorf("telegram: the bot token was rejected (401 Unauthorized); check telegram.token: %w", err)
			}
			return nil
		}}.Run(ctx, c.handshake)
}

// handshake checks the token with getMe and, in polling mode, removes any
// webhook (which would make getUpdates fail with 409).
func (c *Channel) handshake(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	me, err := c.bot.GetMe(ctx)
	if err != nil {
		return fmt.Errorf("getMe: %w", c.redact(err))
	}
	if !c.webhookMode() {
		// Switching back from webhook mode: keep the waiting updates.
		if _, err := c.bot.DeleteWebhook(ctx, &bot.DeleteWebhookParams{DropPendingUpdates: false}); err != nil {
			return fmt.Errorf("deleteWebhook: %w", c.redact(err))
		}
	}
	c.me.Store(&identity{id: me.ID, username: me.Username})
	c.succeeded("connect")
	c.log.Info("telegram connected", "bot_username", me.Username, "bot_id", me.ID)
	return nil
}

// registerCommands sets the bot's command menu (setMyCommands) to
// Options.Commands, once; a refusal is logged, not retried: commands work
// when typed without it.
func (c *Channel) registerCommands(parent context.Context) {
	if len(c.opts.Commands) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(parent, 15*time.Second)
	defer cancel()
	cmds := make([]models.BotCommand, 0, len(c.opts.Commands))
	for _, cmd := range c.opts.Commands {
		cmds = append(cmds, models.BotCommand{Command: cmd.Name, Description: cmd.Description})
	}
	if _, err := c.bot.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: cmds}); err != nil && parent.Err() == nil {
		c.log.Warn("telegram refused the command menu; commands still work when typed",
			"error", c.redact(err))
	}
}

// Ready returns nil while the channel is connected and polling works, else
// the reason it is not.
func (c *Channel) Ready(ctx context.Context) error { return c.health.Ready(ctx) }

func (c *Channel) setState(err error) { c.health.Set(err) }

// failed records a failed call to the API; see channels.Health.
func (c *Channel) failed(op string, err error, retryIn time.Duration) {
	c.health.Failed(op, err, retryIn)
}

// succeeded records a successful call, ending any failure streak.
func (c *Channel) succeeded(op string) { c.health.Succeeded(op) }
