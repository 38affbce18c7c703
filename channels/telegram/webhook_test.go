package telegram_test

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

const (
	hookURL    = "https://bot.example.com/webhooks/telegram"
	hookSecret = "s3cret_webhook-token"
)

// webhookHarness is a Channel in webhook mode with its Webhook served by
// a local HTTP server (the replica's /webhooks/telegram), keeping album
// parts in a new PostgreSQL database.
func webhookHarness(t *testing.T, fake *telegramtest.Server, wait time.Duration) (*harness, *httptest.Server) {
	t.Helper()
	return replicaHarness(t, fake, wait, pgtest.Open(t, context.Background()))
}

// replicaHarness is webhookHarness on the album store of other replicas.
func replicaHarness(t *testing.T, fake *telegramtest.Server, wait time.Duration, albums telegram.AlbumStore) (*harness, *httptest.Server) {
	t.Helper()
	h := newHarnessOn(t, fake, func(o *telegram.Options) {
		o.Webhook = telegram.WebhookOptions{URL: hookURL, Secret: hookSecret, Wait: wait}
		o.Albums = albums
		o.AlbumWait = 200 * time.Millisecond
	})
	hook := h.ch.Webhook()
	if hook == nil {
		t.Fatal("Webhook() is nil in webhook mode")
	}
	srv := httptest.NewServer(hook)
	t.Cleanup(srv.Close)
	return h, srv
}

// waitConnected waits until Start has checked the token (Ready).
func (h *harness) waitConnected() {
	h.t.Helper()
	ctx := h.Ctx()
	for h.ch.Ready(ctx) != nil {
		select {
		case <-ctx.Done():
			h.t.Fatalf("not ready: %v; logs:\n%s", h.ch.Ready(ctx), h.Log)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

func post(t *testing.T, url, secret string, body []byte, withHeader bool) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if withHeader {
		req.Header.Set(telegram.SecretHeader, secret)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}

func updateBody(id, chat int64, text string) []byte {
	n, c := strconv.FormatInt(id, 10), strconv.FormatInt(chat, 10)
	return []byte(`{"update_id":` + n + `,"message":{"message_id":` + n + `,"date":1700000000,` +
		`"chat":{"id":` + c + `,"type":"private"},"from":{"id":` + c + `,"is_bot":false,"first_name":"Ann"},` +
		`"text":"` + text + `"}}`)
}

// TestWebhookRefusesWrongSecrets: every request without the exact secret
// is 401 and reaches no handler, including a valid update replayed with a
// wrong secret; one warning per streak.
func TestWebhookRefusesWrongSecrets(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	h, srv := webhookHarness(t, fake, 0)
	h.Start(nil)
	h.waitConnected()

	valid := updateBody(501, 42, "hello")
	if got := post(t, srv.URL, hookSecret, valid, true); got != http.StatusOK {
		t.Fatalf("valid update: HTTP %d, want 200; logs:\n%s", got, h.Log)
	}
	if in := h.Next(); in.ExternalID != "501" || in.Text != "hello" {
		t.Fatalf("delivered %+v, want update 501", in)
	}
	corpus := map[string]struct {
		secret string
		header bool
		body   []byte
	}{
		"no header":                       {"", false, updateBody(502, 42, "x")},
		"empty header":                    {"", true, updateBody(503, 42, "x")},
		"wrong secret":                    {"not-the-secret", true, updateBody(504, 42, "x")},
		"prefix of the secret":            {hookSecret[:len(hookSecret)-1], true, updateBody(505, 42, "x")},
		"secret plus a character":         {hookSecret + "x", true, updateBody(506, 42, "x")},
		"secret in another case":          {strings.ToUpper(hookSecret), true, updateBody(507, 42, "x")},
		"valid body replayed, bad secret": {"guess", true, valid},
		"bot token as secret":             {"777-test-token-secret", true, updateBody(508, 42, "x")},
		"garbage body, no secret":         {"", false, []byte("{not json")},
	}
	for name, c := range corpus {
		if got := post(t, srv.URL, c.secret, c.body, c.header); got != http.StatusUnauthorized {
			t.Errorf("%s: HTTP %d, want 401", name, got)
		}
	}
	// Nothing refused reached the handler: the next event is the marker.
	if got := post(t, srv.URL, hookSecret, updateBody(600, 42, "marker"), true); got != http.StatusOK {
		t.Fatalf("marker: HTTP %d", got)
	}
	if in := h.Next(); in.ExternalID != "600" {
		t.Errorf("a refused request was delivered: %+v", in)
	}
	logs := h.Log.String()
	if n := channeltest.CountLines(logs, "telegram webhook request rejected (401)"); n != 1 {
		t.Errorf("%d warnings for one streak of %d rejections, want 1:\n%s", n, len(corpus), logs)
	}
	if !strings.Contains(logs, "telegram webhook requests valid again") {
		t.Errorf("the end of the streak was not logged:\n%s", logs)
	}
	if strings.Contains(logs, hookSecret) {
		t.Errorf("the webhook secret is in the log:\n%s", logs)
	}
	if got := post(t, srv.URL, hookSecret, []byte(`{"update_id":0}`), true); got != http.StatusBadRequest {
		t.Errorf("update without an id: HTTP %d, want 400", got)
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set(telegram.SecretHeader, hookSecret)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("GET: %v %v, want 405", resp, err)
	} else {
		_ = resp.Body.Close()
	}
}

// TestWebhookRegistersAndDelivers: RegisterWebhook sets the URL, the
// secret and the allowed updates and keeps pending updates; updates the
// fake posts reach the handler, each answered 200 once.
func TestWebhookRegistersAndDelivers(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	h, srv := webhookHarness(t, fake, 0)
	fake.DeliverTo(srv.URL)
	h.Start(nil)
	h.waitConnected()
	if fake.Requests("deleteWebhook") != 0 {
		t.Error("webhook mode called deleteWebhook")
	}
	if err := h.ch.RegisterWebhook(h.Ctx()); err != nil {
		t.Fatalf("RegisterWebhook: %v", err)
	}
	w := fake.Webhook()
	if w == nil || w.URL != hookURL || w.Secret != hookSecret || w.DropPendingUpdates ||
		!slices.Equal(w.AllowedUpdates, []string{"message", "callback_query"}) {
		t.Fatalf("registered webhook %+v", w)
	}
	id := fake.SendText(42, 42, "Ann", "over the webhook")
	in := h.Next()
	if in.ExternalID != strconv.FormatInt(id, 10) || in.Text != "over the webhook" || in.ChatID != "42" {
		t.Fatalf("delivered %+v", in)
	}
	ctx := h.Ctx()
	for fake.Delivered(id) != 1 {
		select {
		case <-ctx.Done():
			t.Fatalf("update %d answered 200 %d times", id, fake.Delivered(id))
		case <-time.After(5 * time.Millisecond):
		}
	}
	if fake.Requests("getUpdates") != 0 {
		t.Error("webhook mode polled getUpdates")
	}
}

// TestWebhookAnswers503UntilStored: while the handler cannot store an
// update, or the channel does not run, the request is answered 503 and the
// fake posts the update again; it reaches the handler's store once.
func TestWebhookAnswers503UntilStored(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	h, srv := webhookHarness(t, fake, 100*time.Millisecond)
	fake.DeliverTo(srv.URL)
	if err := h.ch.RegisterWebhook(h.Ctx()); err != nil {
		t.Fatalf("RegisterWebhook: %v", err)
	}
	// Not started yet: refused, kept by Telegram.
	id := fake.SendText(42, 42, "Ann", "early")
	ctx := h.Ctx()
	waitFailures := func(n int) {
		t.Helper()
		for {
			if _, failures := fake.WebhookStats(); failures >= n {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("fewer than %d failed posts; logs:\n%s", n, h.Log)
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	waitFailures(2)
	var storeWorks atomic.Bool
	var calls, stored atomic.Int32
	h.Start(func(_ context.Context, in channels.Inbound) error {
		calls.Add(1)
		if !storeWorks.Load() {
			return errors.New("postgres: connection refused")
		}
		stored.Add(1)
		h.Inbound <- in
		return nil
	})
	h.waitConnected()
	waitFailures(4) // refused while the store fails
	if stored.Load() != 0 {
		t.Fatal("stored while the store failed")
	}
	storeWorks.Store(true)
	if in := h.Next(); in.ExternalID != strconv.FormatInt(id, 10) {
		t.Fatalf("delivered %+v", in)
	}
	for fake.Delivered(id) != 1 {
		select {
		case <-ctx.Done():
			t.Fatal("the stored update was never answered 200")
		case <-time.After(5 * time.Millisecond):
		}
	}
	if got := stored.Load(); got != 1 {
		t.Errorf("stored %d times, want 1", got)
	}
	if calls.Load() < 2 {
		t.Errorf("handler called %d times; the failing store was not retried", calls.Load())
	}
	if !strings.Contains(h.Log.String(), "answered 503") {
		t.Errorf("the refusals were not logged:\n%s", h.Log)
	}
}

// TestPollingDeletesWebhook: a channel in polling mode removes a webhook
// left by webhook mode, keeping the updates that waited.
func TestPollingDeletesWebhook(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	wh, _ := webhookHarness(t, fake, 0)
	fake.DeliverTo("http://127.0.0.1:1/unreachable")
	if err := wh.ch.RegisterWebhook(wh.Ctx()); err != nil {
		t.Fatalf("RegisterWebhook: %v", err)
	}
	id := fake.SendText(42, 42, "Ann", "sent while the webhook was set")
	h := newHarnessOn(t, fake, nil)
	h.Start(nil)
	h.waitPolling()
	if fake.Webhook() != nil {
		t.Fatal("polling mode left the webhook set")
	}
	if in := h.Next(); in.ExternalID != strconv.FormatInt(id, 10) {
		t.Fatalf("delivered %+v, want the pending update %d", in, id)
	}
}

// TestWebhookOptionsChecked: webhook mode needs an https URL and a secret
// Telegram accepts.
func TestWebhookOptionsChecked(t *testing.T) {
	for name, w := range map[string]telegram.WebhookOptions{
		"http url":       {URL: "http://bot.example.com/webhooks/telegram", Secret: hookSecret},
		"ftp url":        {URL: "ftp://bot.example.com/webhooks/telegram", Secret: hookSecret},
		"no url":         {Secret: hookSecret},
		"no secret":      {URL: hookURL},
		"bad characters": {URL: hookURL, Secret: "a b"},
		"too long":       {URL: hookURL, Secret: strings.Repeat("a", 257)},
	} {
		if _, err := telegram.New(telegram.Options{Token: token, Webhook: w}); err == nil {
			t.Errorf("%s: New accepted %+v", name, w)
		}
	}
	if _, err := telegram.New(telegram.Options{Token: token, Webhook: telegram.WebhookOptions{URL: hookURL, Secret: hookSecret}}); err == nil ||
		!strings.Contains(err.Error(), "Options.Albums") {
		t.Errorf("New in webhook mode without an album store: %v, want it refused", err)
	}
	ch, err := telegram.New(telegram.Options{Token: token})
	if err != nil {
		t.Fatal(err)
	}
	if ch.Webhook() != nil {
		t.Error("polling mode serves a webhook")
	}
}

// TestWebhookOverHTTPWithLocalBotAPI: with a local Bot API server
// (telegram.api_url not Telegram's own) an http:// webhook URL on any port
// is registered and updates are posted to it; Telegram's own API refuses
// it, and so does the fake acting as Telegram's own, with advice.
func TestWebhookOverHTTPWithLocalBotAPI(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	fake.ActAsLocalServer()
	// The replica listens first: its URL goes into the options.
	srv := httptest.NewUnstartedServer(nil)
	t.Cleanup(srv.Close)
	httpURL := "http://" + srv.Listener.Addr().String() + "/webhooks/telegram" // any port
	albums := pgtest.Open(t, context.Background())
	h := newHarnessOn(t, fake, func(o *telegram.Options) {
		o.Webhook = telegram.WebhookOptions{URL: httpURL, Secret: hookSecret}
		o.Albums = albums
	})
	srv.Config.Handler = h.ch.Webhook()
	srv.Start()
	h.Start(nil)
	h.waitConnected()
	if err := h.ch.RegisterWebhook(h.Ctx()); err != nil {
		t.Fatalf("RegisterWebhook with a local Bot API server: %v", err)
	}
	if w := fake.Webhook(); w == nil || w.URL != httpURL {
		t.Fatalf("registered webhook %+v, want %s", w, httpURL)
	}
	id := fake.SendText(42, 42, "Ann", "over plain http")
	if in := h.Next(); in.ExternalID != strconv.FormatInt(id, 10) || in.Text != "over plain http" {
		t.Fatalf("delivered %+v", in)
	}

	_, err := telegram.New(telegram.Options{Token: token, APIURL: telegram.OfficialAPIURL,
		Webhook: telegram.WebhookOptions{URL: httpURL, Secret: hookSecret}})
	if err == nil || !strings.Contains(err.Error(), "must be https:// for Telegram's own Bot API") ||
		!strings.Contains(err.Error(), "local Bot API server") {
		t.Errorf("New with Telegram's own API and an http:// webhook: %v, want it refused naming https and the local server", err)
	}

	official := telegramtest.NewServer(token)
	t.Cleanup(official.Close)
	h2 := newHarnessOn(t, official, func(o *telegram.Options) {
		o.Webhook = telegram.WebhookOptions{URL: httpURL, Secret: hookSecret}
		o.Albums = albums
	})
	h2.Start(nil)
	h2.waitConnected()
	err = h2.ch.RegisterWebhook(h2.Ctx())
	if err == nil || !strings.Contains(err.Error(), "refused the webhook") || !strings.Contains(err.Error(), "--local") {
		t.Errorf("RegisterWebhook of http:// with a server that takes https only: %v, want refused with advice", err)
	}
	if official.Webhook() != nil {
		t.Error("a server that takes https only registered an http:// webhook")
	}
}
