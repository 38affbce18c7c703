package telegramtest

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// webhookRetryDelay is how long the fake waits before posting an update
// again after a failed delivery (Telegram waits longer; tests want speed).
const webhookRetryDelay = 100 * time.Millisecond

// maxWebhookConns bounds the deliveries in flight, like setWebhook's
// max_connections (Telegram's default is 40).
const maxWebhookConns = 40

// Webhook is the webhook registered with setWebhook.
type Webhook struct {
	URL                string
	Secret             string
	AllowedUpdates     []string
	DropPendingUpdates bool // as the last setWebhook call asked
}

// webhookState is the fake's side of webhook mode.
type webhookState struct {
	hook      *Webhook
	targets   []string       // DeliverTo; empty: hook.URL
	started   bool           // the delivery loop runs
	sending   map[int64]bool // updates being posted
	busyChats map[int64]bool // chats with an update being posted
	retryAt   map[int64]time.Time
	delivered map[int64]int // update id → 200 answers
	attempts  int
	failures  int
	inFlight  int
	client    *http.Client
	lastError string // getWebhookInfo's last_error_message
	lastErrAt int64  // and last_error_date
	// local: the fake acts as a local Bot API server (telegram-bot-api
	// --local), which takes http:// webhook URLs; Telegram's own takes
	// https:// only.
	local bool
}

// ActAsLocalServer makes the fake behave like a local Bot API server
// (telegram-bot-api --local) rather than Telegram's own: setWebhook then
// takes http:// URLs too.
func (s *Server) ActAsLocalServer() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wh.local = true
}

// Webhook returns the registered webhook, or nil when none is set.
func (s *Server) Webhook() *Webhook {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.wh.hook == nil {
		return nil
	}
	w := *s.wh.hook
	w.AllowedUpdates = slices.Clone(w.AllowedUpdates)
	return &w
}

// DeliverTo makes the fake post webhook updates to one of urls, picked at
// random for every attempt, instead of the registered URL: a load balancer
// in front of several replicas. A delivery that fails (no answer or not
// 200) is tried again, again at a random one of urls.
func (s *Server) DeliverTo(urls ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wh.targets = slices.Clone(urls)
	s.notifyLocked()
}

// WebhookStats returns how many webhook posts were made and how many of
// them were not answered 200.
func (s *Server) WebhookStats() (attempts, failures int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wh.attempts, s.wh.failures
}

// Delivered returns how many times update updateID was answered 200 by a
// webhook.
func (s *Server) Delivered(updateID int64) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wh.delivered[updateID]
}

// setWebhook registers a webhook: updates are posted to it from now on,
// and getUpdates is refused with 409 until deleteWebhook.
func (s *Server) setWebhook(p params) (any, *apiError) {
	u := p["url"]
	if u == "" {
		return s.deleteWebhook(p) // as Telegram does: an empty url removes the webhook
	}
	s.mu.Lock()
	local := s.wh.local
	s.mu.Unlock()
	if !strings.HasPrefix(u, "https://") && !(local && strings.HasPrefix(u, "http://")) {
		return nil, badRequest("bad webhook: An HTTPS URL must be provided for webhook")
	}
	secret := p["secret_token"]
	if len(secret) > 256 || strings.Trim(secret, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		return nil, badRequest("secret token contains unallowed characters")
	}
	var allowed []string
	if err := p.json("allowed_updates", &allowed); err != nil {
		return nil, err
	}
	drop := p.bool("drop_pending_updates")
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wh.hook = &Webhook{URL: u, Secret: secret, AllowedUpdates: allowed, DropPendingUpdates: drop}
	if drop {
		s.queue = nil
	}
	if !s.wh.started {
		s.wh.started = true
		s.wh.sending, s.wh.busyChats = map[int64]bool{}, map[int64]bool{}
		s.wh.retryAt, s.wh.delivered = map[int64]time.Time{}, map[int64]int{}
		s.wh.client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: maxWebhookConns}}
		go s.deliverLoop(s.wh.client)
	}
	s.notifyLocked()
	return true, nil
}

// deleteWebhook removes the webhook; getUpdates works again.
func (s *Server) deleteWebhook(p params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wh.hook = nil
	if p.bool("drop_pending_updates") {
		s.queue = nil
	}
	s.notifyLocked()
	return true, nil
}

// getWebhookInfo describes the webhook as Telegram does.
func (s *Server) getWebhookInfo(params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	info := map[string]any{"url": "", "has_custom_certificate": false, "pending_update_count": len(s.queue)}
	if h := s.wh.hook; h != nil {
		info["url"] = h.URL
		info["allowed_updates"] = h.AllowedUpdates
		info["max_connections"] = maxWebhookConns
		if s.wh.lastError != "" {
			info["last_error_date"], info["last_error_message"] = s.wh.lastErrAt, s.wh.lastError
		}
	}
	return info, nil
}

// webhookConflictLocked is getUpdates's answer while a webhook is set.
func (s *Server) webhookConflictLocked() *apiError {
	if s.wh.hook == nil {
		return nil
	}
	return &apiError{status: http.StatusConflict,
		desc: "Conflict: can't use getUpdates method while webhook is active; use deleteWebhook to delete the webhook first"}
}

// deliverLoop posts pending updates to the webhook while one is set: one
// at a time per chat, in order, up to maxWebhookConns at once. An update
// leaves the queue when a post of it is answered 200.
func (s *Server) deliverLoop(client *http.Client) {
	defer client.CloseIdleConnections()
	for {
		s.mu.Lock()
		next := s.startDeliveriesLocked(client)
		ch := s.changed
		s.mu.Unlock()
		wait := time.Hour
		if !next.IsZero() {
			wait = time.Until(next)
		}
		t := time.NewTimer(wait)
		select {
		case <-s.done:
			t.Stop()
			return
		case <-ch:
		case <-t.C:
		}
		t.Stop()
	}
}

// startDeliveriesLocked starts the posts that may start now and returns
// when the next retry is due (zero: none waits).
func (s *Server) startDeliveriesLocked(client *http.Client) (next time.Time) {
	h := s.wh.hook
	if h == nil {
		return time.Time{}
	}
	targets := s.wh.targets
	if len(targets) == 0 {
		targets = []string{h.URL}
	}
	now := time.Now()
	waiting := map[int64]bool{} // chats whose first update waits for its retry
	for _, u := range s.queue {
		if s.wh.inFlight >= maxWebhookConns {
			break
		}
		if s.wh.sending[u.id] || s.wh.busyChats[u.chat] || waiting[u.chat] {
			continue
		}
		if at, ok := s.wh.retryAt[u.id]; ok && at.After(now) {
			if next.IsZero() || at.Before(next) {
				next = at
			}
			waiting[u.chat] = true // later updates of the chat keep their order
			continue
		}
		body, err := marshal(u.body)
		if err != nil {
			continue
		}
		s.wh.sending[u.id] = true
		s.wh.busyChats[u.chat] = true
		s.wh.inFlight++
		go s.post(client, targets[rand.IntN(len(targets))], h.Secret, u, body)
	}
	return next
}

// post delivers one update and records the answer.
func (s *Server) post(client *http.Client, target, secret string, u update, body []byte) {
	defer func() {
		select {
		case <-s.done: // the server closed while this post was out
			client.CloseIdleConnections()
		default:
		}
	}()
	status := 0
	req, err := http.NewRequest(http.MethodPost, target, bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		if secret != "" {
			req.Header.Set("X-Telegram-Bot-Api-Secret-Token", secret)
		}
		if resp, err := client.Do(req); err == nil {
			status = resp.StatusCode
			_ = resp.Body.Close()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.wh.sending, u.id)
	delete(s.wh.busyChats, u.chat)
	s.wh.inFlight--
	s.wh.attempts++
	if status == http.StatusOK {
		s.wh.delivered[u.id]++
		delete(s.wh.retryAt, u.id)
		s.queue = slices.DeleteFunc(s.queue, func(q update) bool { return q.id == u.id })
	} else {
		s.wh.failures++
		s.wh.retryAt[u.id] = time.Now().Add(webhookRetryDelay)
		s.wh.lastErrAt = time.Now().Unix()
		s.wh.lastError = "Connection refused"
		if status != 0 {
			s.wh.lastError = "Wrong response from the webhook: " + strconv.Itoa(status) + " " + http.StatusText(status)
		}
	}
	s.notifyLocked()
}
