package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"github.com/switchboard-chat/switchboard/channels"
)

// ackTimeout bounds how long an acknowledgement may wait to be written.
const ackTimeout = 5 * time.Second

var errReconnecting = errors.New("slack socket mode: reconnecting")

// socketWriteBuffer is Socket Mode's websocket write buffer, slack-go's
// own: above Slack's 20 KB limit for an envelope's response, so that one
// is written as a single frame.
const socketWriteBuffer = 32 << 10

// socketDialer is the Socket Mode websocket dialer: slack-go's settings
// (proxy from the environment, a 45 s handshake, socketWriteBuffer), with
// the write buffer taken from a pool for each message instead of held for
// the connection's life, so an idle connection keeps none.
func socketDialer() *websocket.Dialer {
	return &websocket.Dialer{
		Proxy:            http.ProxyFromEnvironment,
		HandshakeTimeout: 45 * time.Second,
		WriteBufferSize:  socketWriteBuffer,
		WriteBufferPool:  &sync.Pool{},
	}
}

// runSocket holds a Socket Mode connection until ctx ends. slack-go's
// client reconnects on its own (with backoff) when the connection drops or
// Slack asks it to; this loop tracks the connection state for Ready and
// queues events for the handler, whose envelopes are acknowledged once the
// handler stored them; other envelopes are acknowledged at once. It returns
// nil when ctx ends and an error when Slack rejects the app token.
func (c *Channel) runSocket(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	smc := socketmode.New(c.api, socketmode.OptionLog(libLog{c.log}), socketmode.OptionDialer(socketDialer()))
	done := make(chan error, 1)
	go func() { done <- smc.RunContext(ctx) }()
	var fatal error
	for {
		select {
		case err := <-done:
			switch {
			case fatal != nil:
				return fatal
			case ctx.Err() != nil:
				return nil
			}
			err = c.redact(err)
			c.health.Set(err)
			return fmt.Errorf("slack: Socket Mode refused the app token (%w); check slack.app_token: an xapp- app-level token with the connections:write scope, from Basic Information of your Slack app", err)
		case ev := <-smc.Events:
			if err := c.onSocketEvent(ctx, smc, ev); err != nil && fatal == nil {
				fatal = err
				cancel() // RunContext returns, and so do we
			}
		}
	}
}

// onSocketEvent handles one event of the Socket Mode client. It returns an
// error when the connection cannot succeed (a rejected app token).
func (c *Channel) onSocketEvent(ctx context.Context, smc *socketmode.Client, ev socketmode.Event) error {
	var envelope string
	if ev.Request != nil {
		envelope = ev.Request.EnvelopeID
	}
	if c.queueSocketEvent(ctx, smc, ev, envelope) {
		return nil // acknowledged once handled
	}
	if envelope != "" {
		c.ack(ctx, smc, envelope)
	}
	switch ev.Type {
	case socketmode.EventTypeConnecting:
		if e, ok := ev.Data.(*slack.ConnectingEvent); ok && e.ConnectionCount > 0 && e.Attempt == 1 {
			c.log.Info("slack socket mode connection closed, reconnecting", "connection", e.ConnectionCount)
			c.health.Set(errReconnecting)
		}
	case socketmode.EventTypeConnectionError:
		e, _ := ev.Data.(*slack.ConnectionErrorEvent)
		if e == nil {
			return nil
		}
		if isAuthError(e.ErrorObj) {
			err := c.redact(e.ErrorObj)
			c.health.Set(err)
			return fmt.Errorf("slack: Socket Mode refused the app token (%w); check slack.app_token: an xapp- app-level token with the connections:write scope, from Basic Information of your Slack app", err)
		}
		c.health.Failed("socket_mode", e.ErrorObj, e.Backoff)
	case socketmode.EventTypeInvalidAuth:
		c.health.Set(errors.New("slack socket mode: invalid auth"))
	case socketmode.EventTypeHello:
		c.health.Succeeded("socket_mode")
		c.log.Debug("slack socket mode connected")
	case socketmode.EventTypeInteractive:
		if cb, ok := ev.Data.(slack.InteractionCallback); ok {
			c.log.Debug("slack interaction ignored", "type", string(cb.Type))
		}
	case socketmode.EventTypeErrorBadMessage:
		// An envelope slack-go could not parse (an event type it does not
		// know): acknowledge it anyway, or Slack keeps resending it.
		if e, ok := ev.Data.(*socketmode.ErrorBadMessage); ok {
			var req socketmode.Request
			if json.Unmarshal(e.Message, &req) == nil && req.EnvelopeID != "" {
				c.ack(ctx, smc, req.EnvelopeID)
			}
			c.log.Debug("slack envelope not understood; acknowledged and ignored", "envelope_id", req.EnvelopeID, "error", e.Cause)
		}
	case socketmode.EventTypeIncomingError, socketmode.EventTypeErrorWriteFailed:
		c.log.Debug("slack socket mode error", "type", string(ev.Type), "data", fmt.Sprint(ev.Data))
	}
	return nil
}

// queueSocketEvent queues a message or button press for the handler, to be
// acknowledged once the handler stored it. It reports whether ev was such
// an event; when ctx ends before it is queued, it stays unacknowledged.
func (c *Channel) queueSocketEvent(ctx context.Context, smc *socketmode.Client, ev socketmode.Event, envelope string) bool {
	var in channels.Inbound
	var ok bool
	switch ev.Type {
	case socketmode.EventTypeEventsAPI:
		if e, isEvent := ev.Data.(slackevents.EventsAPIEvent); isEvent {
			in, ok = c.fromEvent(e)
		}
	case socketmode.EventTypeInteractive:
		if cb, isPress := ev.Data.(slack.InteractionCallback); isPress {
			in, ok = c.fromPress(cb)
		}
	}
	if !ok {
		return false
	}
	c.enqueue(ctx, in, func(err error) {
		if err == nil && envelope != "" {
			c.ack(ctx, smc, envelope)
		}
	})
	return true
}

// ack acknowledges an envelope. Acknowledgements are queued to the
// connection's writer, so this returns at once unless the writer is stuck.
func (c *Channel) ack(ctx context.Context, smc *socketmode.Client, envelopeID string) {
	ctx, cancel := context.WithTimeout(ctx, ackTimeout)
	defer cancel()
	if err := smc.AckCtx(ctx, envelopeID, nil); err != nil {
		c.log.Warn("slack envelope not acknowledged; Slack will resend it", "envelope_id", envelopeID, "error", err)
	}
}
