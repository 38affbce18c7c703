package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/bwmarrin/discordgo"
	"github.com/gorilla/websocket"

	"github.com/switchboard-chat/switchboard/channels"
)

// Start checks the token, connects to the gateway and delivers messages and
// button presses to h until ctx ends, then returns nil. While Discord is
// unreachable it retries with capped backoff, logging once per failure
// streak, and Ready reports the last error; after a dropped connection it
// resumes the session, so Discord replays the events missed meanwhile. It
// returns an error only when Discord rejects the token or the intents.
//
// Events are handled one at a time, in order, on one goroutine; a button
// press is acknowledged to Discord before it is queued. The gateway has no
// redelivery, so when h fails (the event was not stored) it is called
// again, with backoff, until it succeeds or ctx ends; later events wait
// meanwhile. Events still queued or failing when ctx ends are dropped (and
// logged).
func (c *Channel) Start(ctx context.Context, h channels.Handler) error {
	if h == nil {
		return errors.New("discord: Start needs a handler")
	}
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("discord: Start called while already running")
	}
	defer c.running.Store(false)
	c.stopping.Store(false)
	c.health.Set(errConnecting)

	if c.opts.Sessions != nil {
		c.claimSession(ctx)
		saveCtx, stopSaving := context.WithCancel(ctx)
		saved := make(chan struct{})
		go func() { defer close(saved); c.saveSessions(saveCtx) }()
		defer func() {
			// After the queue drained (deferred below, runs first): the
			// last progress, for whoever resumes the session.
			stopSaving()
			<-saved
			c.saveSession(context.WithoutCancel(ctx))
		}()
	}
	q := newQueue()
	c.queue.Store(q)
	retrying := channels.NewHandleRetry(Platform, c.log, c.opts.RetryMin, c.opts.RetryMax)
	store := func(ctx context.Context, in channels.Inbound) error { return retrying.Do(ctx, h, in) }
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.work(ctx, q, store)
	}()
	defer func() {
		c.queue.Store(nil)
		q.close()
		wg.Wait()
	}()

	if err := c.run(ctx); err != nil && ctx.Err() == nil {
		return err // Ready keeps reporting it
	}
	c.health.Set(errStopped)
	return nil
}

// run checks the token and keeps a gateway connection until ctx ends.
func (c *Channel) run(ctx context.Context) error {
	if err := c.retry(ctx, "login", c.login); err != nil {
		return err
	}
	defer func() {
		c.stopping.Store(true)
		if c.opts.Sessions != nil {
			_ = c.sess.CloseWithCode(resumableClose) // the next holder resumes
			return
		}
		_ = c.sess.Close() // sends a close frame and waits a second for it
	}()
	return c.retry(ctx, "gateway", func(ctx context.Context) error {
		if err := c.open(ctx); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.lost:
		}
		return errLost
	})
}

// retry calls fn until ctx ends or fn fails for good, backing off between
// failed attempts. A nil from fn ends the loop; a lost session starts the
// backoff over.
func (c *Channel) retry(ctx context.Context, op string, fn func(context.Context) error) error {
	return channels.Reconnect{Health: c.health, Op: op, Min: c.opts.RetryMin, Max: c.opts.RetryMax,
		Fatal: fatalError, Fresh: func(err error) bool { return errors.Is(err, errLost) }}.Run(ctx, fn)
}

// login checks the token with GET /users/@me and learns the bot's id.
func (c *Channel) login(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	me, err := c.sess.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		return fmt.Errorf("GET /users/@me: %w", c.redact(err))
	}
	c.mu.Lock()
	c.botID = me.ID
	c.mu.Unlock()
	c.log.Info("discord token accepted", "bot_id", me.ID, "bot_username", me.Username)
	return nil
}

// open connects the gateway session, resuming the previous one when there
// is one. A handshake that hangs longer than handshakeTimeout, or outlives
// ctx, is cut short.
func (c *Channel) open(ctx context.Context) error {
	select {
	case <-c.lost: // a stale signal from the previous connection
	default:
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		timer := time.NewTimer(handshakeTimeout)
		defer timer.Stop()
		select {
		case <-ctx.Done():
			c.conns.abort()
		case <-timer.C:
			c.conns.abort()
		case <-done:
		}
	}()
	err := c.sess.Open()
	close(done)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("open gateway: %w", c.redact(err))
	}
	return nil
}

// fatalError turns the gateway close codes and REST answers that retrying
// cannot fix into errors saying what to do; it returns nil for others.
func fatalError(err error) error {
	var closed *websocket.CloseError
	if errors.As(err, &closed) {
		switch closed.Code {
		case 4004:
			return fmt.Errorf("discord: the gateway rejected the bot token (4004 Authentication failed); check discord.token: %w", err)
		case 4013, 4014:
			return fmt.Errorf("discord: the gateway refused the intents (%d %s); enable \"Message Content Intent\" under Bot → Privileged Gateway Intents in the Discord Developer Portal: %w",
				closed.Code, closed.Text, err)
		case 4010, 4011, 4012:
			return fmt.Errorf("discord: the gateway refused the connection (%d %s); this bot needs sharding or a newer switchboard: %w",
				closed.Code, closed.Text, err)
		}
	}
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Response != nil && rest.Response.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("discord: the bot token was rejected (401 Unauthorized); check discord.token: %w", err)
	}
	return nil
}

// Ready returns nil while the gateway session is live, else the reason it
// is not.
func (c *Channel) Ready(ctx context.Context) error { return c.health.Ready(ctx) }

// onReady handles READY: a new gateway session.
func (c *Channel) onReady(_ *discordgo.Session, r *discordgo.Ready) {
	if r.User != nil {
		c.mu.Lock()
		c.botID = r.User.ID
		c.mu.Unlock()
	}
	c.health.Succeeded("identify")
	c.log.Info("discord gateway connected", "session", "new")
}

// onResumed handles RESUMED: the previous session continues.
func (c *Channel) onResumed(*discordgo.Session, *discordgo.Resumed) {
	c.health.Succeeded("resume")
	c.log.Info("discord gateway connected", "session", "resumed")
}

// onDisconnect handles the end of a gateway connection.
func (c *Channel) onDisconnect(*discordgo.Session, *discordgo.Disconnect) {
	if c.stopping.Load() {
		return
	}
	c.health.Failed("gateway", errLost, 0)
	select {
	case c.lost <- struct{}{}:
	default:
	}
}

// bot returns the bot's user id, once known.
func (c *Channel) bot() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.botID
}
