package slack

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"

	"github.com/switchboard-chat/switchboard/channels"
)

const (
	// maxBody bounds a webhook request body; Slack's are a few kilobytes.
	maxBody = 1 << 20
	// signatureWindow is how far a request's timestamp may be from now;
	// slack.NewSecretsVerifier enforces it, and the replay check remembers
	// signatures for as long.
	signatureWindow = 5 * time.Minute
	// webhookWait bounds how long a request waits for its event to be
	// handled; Slack itself gives up after 3 s and retries.
	webhookWait = 30 * time.Second
)

var errReplay = errors.New("request already received (replay)")

// webhookState holds the replay cache and the rejection streak.
type webhookState struct {
	mu        sync.Mutex
	seen      map[string]time.Time // timestamp:signature → when it stops being valid
	lastPrune time.Time
	rejects   *channels.WebhookRejects
}

// Webhook serves Slack's HTTP Events API and interactivity on one path;
// mount it at /webhooks/slack and give https://host/webhooks/slack as both
// the Event Subscriptions request URL and the Interactivity request URL.
//
// Every request must carry a valid v0 signature made with the signing
// secret and a timestamp within five minutes; a request seen before (same
// timestamp and signature) is a replay. Such requests get 401 and change
// nothing; the first of a streak is logged as a warning, the rest at debug
// level. url_verification is answered with its challenge. Events and
// button presses are queued for the handler and answered 200 once the
// handler stored them, or 503 (so that Slack retries) when it failed, until
// Start has authenticated and while the queue is full.
func (c *Channel) Webhook() http.Handler {
	return http.HandlerFunc(c.serveWebhook)
}

func (c *Channel) serveWebhook(w http.ResponseWriter, r *http.Request) {
	if c.opts.SigningSecret == "" {
		http.Error(w, "Slack Events API is off: set slack.signing_secret", http.StatusNotFound)
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	if err := c.verify(r.Header, body); err != nil {
		c.hook.rejects.Rejected(err.Error())
		http.Error(w, "invalid or stale Slack signature", http.StatusUnauthorized)
		return
	}
	c.hook.rejects.Accepted()
	if strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-www-form-urlencoded") {
		c.serveInteraction(w, r, body)
		return
	}
	c.serveEvent(w, r, body)
}

// verify checks the request's signature and timestamp, and that it was not
// received before. Only requests with a valid signature are remembered.
func (c *Channel) verify(h http.Header, body []byte) error {
	sv, err := slack.NewSecretsVerifier(h, c.opts.SigningSecret)
	if err != nil {
		return err
	}
	if _, err := sv.Write(body); err != nil {
		return err
	}
	if err := sv.Ensure(); err != nil {
		return err
	}
	ts, err := strconv.ParseInt(h.Get("X-Slack-Request-Timestamp"), 10, 64)
	if err != nil {
		return err // NewSecretsVerifier parsed it already
	}
	key := h.Get("X-Slack-Request-Timestamp") + ":" + h.Get("X-Slack-Signature")
	now := time.Now()
	c.hook.mu.Lock()
	defer c.hook.mu.Unlock()
	if until, ok := c.hook.seen[key]; ok && now.Before(until) {
		return errReplay
	}
	if now.Sub(c.hook.lastPrune) > time.Minute {
		for k, until := range c.hook.seen {
			if now.After(until) {
				delete(c.hook.seen, k)
			}
		}
		c.hook.lastPrune = now
	}
	c.hook.seen[key] = time.Unix(ts, 0).Add(signatureWindow + time.Second)
	return nil
}

// serveEvent handles an Events API request.
func (c *Channel) serveEvent(w http.ResponseWriter, r *http.Request, body []byte) {
	var outer struct {
		Type      string `json:"type"`
		Challenge string `json:"challenge"`
	}
	if err := json.Unmarshal(body, &outer); err != nil {
		http.Error(w, "body is not an Events API payload", http.StatusBadRequest)
		return
	}
	switch outer.Type {
	case slackevents.URLVerification:
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]string{"challenge": outer.Challenge})
	case slackevents.CallbackEvent:
		if !c.accepting() {
			http.Error(w, "not connected yet; retry later", http.StatusServiceUnavailable)
			return
		}
		e, err := slackevents.ParseEvent(body, slackevents.OptionNoVerifyToken())
		if err != nil {
			c.log.Debug("slack event not understood; ignored", "error", err)
			w.WriteHeader(http.StatusOK)
			return
		}
		if in, ok := c.fromEvent(e); ok {
			c.offer(w, r, in)
			return
		}
		w.WriteHeader(http.StatusOK)
	case slackevents.AppRateLimited:
		c.log.Warn("slack is dropping events: the app exceeded the Events API rate limit")
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusOK)
	}
}

// serveInteraction handles an interactivity request (form field payload).
func (c *Channel) serveInteraction(w http.ResponseWriter, r *http.Request, body []byte) {
	form, err := url.ParseQuery(string(body))
	if err != nil {
		http.Error(w, "malformed form body", http.StatusBadRequest)
		return
	}
	payload := form.Get("payload")
	if payload == "" {
		w.WriteHeader(http.StatusOK) // a slash command or other request we do not handle
		return
	}
	var cb slack.InteractionCallback
	if err := json.Unmarshal([]byte(payload), &cb); err != nil {
		http.Error(w, "payload is not an interaction", http.StatusBadRequest)
		return
	}
	if !c.accepting() {
		http.Error(w, "not connected yet; retry later", http.StatusServiceUnavailable)
		return
	}
	in, ok := c.fromPress(cb)
	if !ok {
		c.log.Debug("slack interaction ignored", "type", string(cb.Type))
		w.WriteHeader(http.StatusOK)
		return
	}
	c.offer(w, r, in)
}

// accepting reports whether events can be handled: the channel runs and
// knows who the bot is (to recognise its own messages and mentions).
func (c *Channel) accepting() bool {
	return c.running.Load() && c.whoami().userID != ""
}

// offer queues in for the handler and answers 200 once the handler stored
// it, or 503, so that Slack retries, when the queue is full, the handler
// failed or the channel stopped first. A request whose client gave up gets
// no answer; its event may still be handled.
func (c *Channel) offer(w http.ResponseWriter, r *http.Request, in channels.Inbound) {
	result := make(chan error, 1)
	select {
	case c.inbox <- &queued{in: in, done: func(err error) { result <- err }}:
	default:
		c.log.Warn("slack event queue full; asking Slack to retry", "external_id", in.ExternalID)
		http.Error(w, "busy; retry later", http.StatusServiceUnavailable)
		return
	}
	timer := time.NewTimer(webhookWait)
	defer timer.Stop()
	select {
	case err := <-result:
		if err != nil {
			http.Error(w, "event not stored; retry later", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusOK)
	case <-timer.C:
		http.Error(w, "event not handled in time; retry later", http.StatusServiceUnavailable)
	case <-r.Context().Done():
	}
}
