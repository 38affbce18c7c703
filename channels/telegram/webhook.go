package telegram

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
)

const (
	// SecretHeader carries the webhook secret in every request Telegram
	// posts.
	SecretHeader = "X-Telegram-Bot-Api-Secret-Token"
	// maxUpdateBody bounds a webhook request body; updates are a few
	// kilobytes.
	maxUpdateBody = 1 << 20
	// defaultWebhookWait is WebhookOptions.Wait's default.
	defaultWebhookWait = 20 * time.Second
)

// allowedUpdates are the update kinds switchboard asks Telegram for, by
// getUpdates or by webhook.
var allowedUpdates = bot.AllowedUpdates{models.AllowedUpdateMessage, models.AllowedUpdateCallbackQuery}

// OfficialAPIURL is Telegram's own Bot API, which posts webhooks only to
// https:// addresses.
const OfficialAPIURL = "https://api.telegram.org"

// IsOfficialAPI reports whether apiURL (empty: the default) is Telegram's
// own Bot API rather than a local Bot API server (telegram-bot-api
// --local), which also posts to http:// addresses on any port.
func IsOfficialAPI(apiURL string) bool {
	if strings.TrimSpace(apiURL) == "" {
		return true
	}
	u, err := url.Parse(apiURL)
	return err != nil || strings.EqualFold(u.Hostname(), "api.telegram.org")
}

// check reports what is wrong with o, given the Bot API it registers with;
// the zero value (polling) is fine.
func (o WebhookOptions) check(apiURL string) error {
	if o.URL == "" && o.Secret == "" {
		return nil
	}
	u, err := url.Parse(o.URL)
	switch {
	case o.URL == "" || err != nil || u.Host == "" || u.Scheme != "https" && u.Scheme != "http":
		return fmt.Errorf("telegram: webhook mode needs telegram.webhook_url, the public https:// address of /webhooks/telegram (got %q)", o.URL)
	case u.Scheme == "http" && IsOfficialAPI(apiURL):
		return fmt.Errorf("telegram: telegram.webhook_url must be https:// for Telegram's own Bot API (got %q); "+
			"http:// works only with a local Bot API server set in telegram.api_url", o.URL)
	}
	if err := CheckWebhookSecret(o.Secret); err != nil {
		return fmt.Errorf("telegram: %w", err)
	}
	return nil
}

// CheckWebhookSecret reports whether s can be Telegram's secret_token:
// 1–256 characters of A–Z, a–z, 0–9, _ and -.
func CheckWebhookSecret(s string) error {
	if s == "" {
		return errors.New("webhook mode needs telegram.webhook_secret (1-256 characters of A-Z, a-z, 0-9, _ and -), e.g. from `openssl rand -hex 32`")
	}
	if len(s) > 256 {
		return fmt.Errorf("telegram.webhook_secret is %d characters; Telegram takes at most 256", len(s))
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-') {
			return errors.New("telegram.webhook_secret may hold only A-Z, a-z, 0-9, _ and -")
		}
	}
	return nil
}

// webhookMode reports whether updates come by webhook.
func (c *Channel) webhookMode() bool { return c.opts.Webhook.URL != "" }

// webhookGate admits webhook requests while Start runs, and lets Start
// wait for those in progress when it stops.
type webhookGate struct {
	mu   sync.Mutex
	ctx  context.Context // Start's; nil while stopped
	h    channels.Handler
	busy sync.WaitGroup
}

// open admits requests, handing them h under ctx.
func (g *webhookGate) open(ctx context.Context, h channels.Handler) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.ctx, g.h = ctx, h
}

// close refuses new requests and waits for those admitted.
func (g *webhookGate) close() {
	g.mu.Lock()
	g.ctx, g.h = nil, nil
	g.mu.Unlock()
	g.busy.Wait()
}

// enter admits one request; leave must follow when ok.
func (g *webhookGate) enter() (ctx context.Context, h channels.Handler, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.h == nil {
		return nil, nil, false
	}
	g.busy.Add(1)
	return g.ctx, g.h, true
}

func (g *webhookGate) leave() { g.busy.Done() }

// Webhook serves the updates Telegram posts in webhook mode; the daemon
// mounts it at /webhooks/telegram. It is nil in polling mode.
//
// A request without the right X-Telegram-Bot-Api-Secret-Token is answered
// 401 and changes nothing. An update is answered 200 only once the handler
// has stored it; when storing fails (or the channel is not running) the
// answer is 503 and Telegram delivers the update again, to this replica or
// another. The handler sees an update delivered twice with the same
// ExternalID (its update_id), so its durable dedupe keeps one.
func (c *Channel) Webhook() http.Handler {
	if !c.webhookMode() {
		return nil
	}
	return http.HandlerFunc(c.serveWebhook)
}

func (c *Channel) serveWebhook(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	got := r.Header.Get(SecretHeader)
	if subtle.ConstantTimeCompare([]byte(got), []byte(c.opts.Webhook.Secret)) != 1 {
		reason := "wrong " + SecretHeader
		if got == "" {
			reason = "no " + SecretHeader
		}
		c.rejects.Rejected(reason)
		http.Error(w, "missing or wrong secret token", http.StatusUnauthorized)
		return
	}
	c.rejects.Accepted()
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxUpdateBody))
	if err != nil {
		http.Error(w, "body too large or unreadable", http.StatusRequestEntityTooLarge)
		return
	}
	var u models.Update
	if err := json.Unmarshal(body, &u); err != nil || u.ID == 0 {
		http.Error(w, "body is not a Telegram update", http.StatusBadRequest)
		return
	}
	runCtx, h, ok := c.hooks.enter()
	if !ok {
		http.Error(w, "not running; retry later", http.StatusServiceUnavailable)
		return
	}
	defer c.hooks.leave()
	// Retries end with the channel or the wait; each store attempt itself
	// is not cut short by either (the handler's durable writes outlive
	// their caller's context).
	ctx, cancel := context.WithTimeout(runCtx, c.webhookWait())
	defer cancel()
	if err := c.deliverPosted(ctx, h, &u); err != nil {
		c.log.Info("telegram update not stored; answered 503 so Telegram delivers it again",
			"update_id", u.ID, "error", err)
		http.Error(w, "update not stored; retry later", http.StatusServiceUnavailable)
		return
	}
	w.WriteHeader(http.StatusOK)
}

// webhookWait is how long a webhook request waits for its update to be
// handled.
func (c *Channel) webhookWait() time.Duration {
	if c.opts.Webhook.Wait > 0 {
		return c.opts.Webhook.Wait
	}
	return defaultWebhookWait
}

// deliverPosted hands an update posted to the webhook to h: an album's
// part is stored to be handed over with its album (see
// webhook_albums.go), anything else at once, after the chat's albums
// still collected.
func (c *Channel) deliverPosted(ctx context.Context, h channels.Handler, u *models.Update) error {
	if key, ok := albumOf(u); ok {
		return c.storeAlbumPart(ctx, key, u)
	}
	if err := c.handOverWebhookAlbums(ctx, h, chatOf(u)); err != nil {
		return err
	}
	return c.deliver(ctx, h, u)
}

// RegisterWebhook tells Telegram to post updates to the webhook URL with
// the secret, keeping the updates that wait (drop_pending_updates=false).
// It retries until Telegram accepts or ctx ends; one replica (the leader)
// calls it.
func (c *Channel) RegisterWebhook(ctx context.Context) error {
	if !c.webhookMode() {
		return errors.New("telegram: RegisterWebhook in polling mode")
	}
	return channels.Reconnect{Health: c.health, Op: "setWebhook", Min: c.opts.RetryMin, Max: c.opts.RetryMax,
		Fatal: func(err error) error {
			if errors.Is(err, bot.ErrorUnauthorized) {
				return fmt.Errorf("telegram: the bot token was rejected (401 Unauthorized); check telegram.token: %w", err)
			}
			if errors.Is(err, bot.ErrorBadRequest) {
				if IsOfficialAPI(c.opts.APIURL) {
					return fmt.Errorf("telegram refused the webhook; check telegram.webhook_url (public https, port 443, 80, 88 or 8443): %w", err)
				}
				return fmt.Errorf("the Bot API server at telegram.api_url refused the webhook; check telegram.webhook_url "+
					"(https://, or http:// when the server runs with --local): %w", err)
			}
			return nil
		}}.Run(ctx, func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		_, err := c.bot.SetWebhook(ctx, &bot.SetWebhookParams{
			URL:                c.opts.Webhook.URL,
			AllowedUpdates:     allowedUpdates,
			DropPendingUpdates: false,
			SecretToken:        c.opts.Webhook.Secret,
		})
		if err != nil {
			return fmt.Errorf("setWebhook: %w", c.redact(err))
		}
		c.succeeded("setWebhook")
		c.log.Info("telegram webhook registered", "url", c.opts.Webhook.URL)
		return nil
	})
}
