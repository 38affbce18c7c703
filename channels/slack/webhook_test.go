package slack_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// newHookHarness builds a channel in Events API mode (no app token).
func newHookHarness(t *testing.T) *harness {
	return newHarness(t, func(o *slack.Options) { o.AppToken = ""; o.SigningSecret = secret })
}

// post sends body to the webhook, signed with key at ts, and returns the
// response.
func (h *harness) post(body []byte, contentType, key string, ts time.Time) *httptest.ResponseRecorder {
	h.t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/webhooks/slack", bytes.NewReader(body))
	r.Header.Set("Content-Type", contentType)
	slacktest.SignHeaders(r.Header, key, ts, body)
	w := httptest.NewRecorder()
	h.ch.Webhook().ServeHTTP(w, r)
	return w
}

func (h *harness) postEvent(eventID string, event any) *httptest.ResponseRecorder {
	return h.post(slacktest.EventBody(eventID, event), "application/json", secret, time.Now())
}

func TestWebhookURLVerification(t *testing.T) {
	h := newHookHarness(t) // not started: verification works before Start
	body := []byte(`{"token":"x","challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P","type":"url_verification"}`)
	w := h.post(body, "application/json", secret, time.Now())
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	var got struct{ Challenge string }
	if err := json.Unmarshal(w.Body.Bytes(), &got); err != nil || got.Challenge != "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" {
		t.Errorf("answer %q (%v), want the challenge", w.Body, err)
	}
	if w := h.post(body, "application/json", "wrong-secret", time.Now()); w.Code != http.StatusUnauthorized {
		t.Errorf("unsigned verification answered %d", w.Code)
	}
}

func TestWebhookDeliversEventsAndPresses(t *testing.T) {
	h := newHookHarness(t)
	h.Start(nil)
	h.WaitReady()
	w := h.postEvent("EvHTTP1", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "over http", TS: "1700000010.000100"}.Event())
	if w.Code != http.StatusOK {
		t.Fatalf("status %d: %s", w.Code, w.Body)
	}
	in := h.Next()
	if in.Text != "over http" || in.ExternalID != "EvHTTP1" || in.ChatID != "D0ANN" || !in.Direct || in.UserName != "Ann" {
		t.Errorf("inbound = %+v", in)
	}

	body := slacktest.InteractionBody(slacktest.Press{Channel: "D0ANN", User: "U0ANN", MessageTS: "1700000010.000900",
		ActionID: "sb_1", Value: "ar:0123456789abcdefghij:a"}.BlockActions())
	if w := h.post(body, "application/x-www-form-urlencoded", secret, time.Now()); w.Code != http.StatusOK {
		t.Fatalf("interaction status %d: %s", w.Code, w.Body)
	}
	in = h.Next()
	if in.Press == nil || in.Press.Data != "ar:0123456789abcdefghij:a" || in.Press.MessageID != "1700000010.000900" {
		t.Errorf("press inbound = %+v", in)
	}

	// Events the bot does not answer are acknowledged with 200 all the same.
	if w := h.postEvent("EvBot", slacktest.Msg{Channel: "D0ANN", BotID: "B0OTHER", Text: "beep"}.Event()); w.Code != http.StatusOK {
		t.Errorf("ignored event answered %d", w.Code)
	}
	if w := h.postEvent("EvOdd", map[string]any{"type": "made_up_event"}); w.Code != http.StatusOK {
		t.Errorf("unknown event answered %d", w.Code)
	}
	h.postEvent("EvMark", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "marker"}.Event())
	if in := h.Next(); in.Text != "marker" {
		t.Errorf("an ignored event was delivered: %+v", in)
	}
}

func TestWebhookRejectsForgedStaleAndReplayedRequests(t *testing.T) {
	h := newHookHarness(t)
	h.Start(nil)
	h.WaitReady()
	event := func(text string) []byte {
		return slacktest.EventBody("Ev-"+text, slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: text}.Event())
	}
	now := time.Now()

	valid := event("valid")
	if w := h.post(valid, "application/json", secret, now); w.Code != http.StatusOK {
		t.Fatalf("valid request answered %d: %s", w.Code, w.Body)
	}
	if in := h.Next(); in.Text != "valid" {
		t.Fatalf("got %+v", in)
	}

	rejected := map[string]func() *httptest.ResponseRecorder{
		"wrong secret": func() *httptest.ResponseRecorder {
			return h.post(event("forged"), "application/json", "wrong-secret", now)
		},
		"stale timestamp": func() *httptest.ResponseRecorder {
			return h.post(event("stale"), "application/json", secret, now.Add(-6*time.Minute))
		},
		"future timestamp": func() *httptest.ResponseRecorder {
			return h.post(event("future"), "application/json", secret, now.Add(6*time.Minute))
		},
		"replay":            func() *httptest.ResponseRecorder { return h.post(valid, "application/json", secret, now) },
		"tampered body":     func() *httptest.ResponseRecorder { return h.tampered(event("original"), event("tampered"), now) },
		"missing signature": func() *httptest.ResponseRecorder { return h.unsigned(event("unsigned"), now) },
		"forged interaction": func() *httptest.ResponseRecorder {
			return h.post(forgedPress(), "application/x-www-form-urlencoded", "x", now)
		},
	}
	for name, send := range rejected {
		if w := send(); w.Code != http.StatusUnauthorized {
			t.Errorf("%s answered %d, want 401", name, w.Code)
		}
	}
	logs := h.Log.String()
	if n := channeltest.CountLines(logs, "slack webhook request rejected"); n != 1 {
		t.Errorf("%d warnings for one streak of %d rejections, want 1:\n%s", n, len(rejected), logs)
	}
	if strings.Contains(logs, secret) {
		t.Errorf("logs leak the signing secret:\n%s", logs)
	}

	// Nothing rejected reached the handler: the next event is the marker.
	if w := h.postEvent("EvMark", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "marker"}.Event()); w.Code != http.StatusOK {
		t.Fatalf("marker answered %d", w.Code)
	}
	if in := h.Next(); in.Text != "marker" {
		t.Errorf("a rejected request was delivered: %+v", in)
	}
	if !strings.Contains(h.Log.String(), "slack webhook requests valid again") {
		t.Errorf("end of the streak not logged:\n%s", h.Log)
	}
	// A new streak warns again.
	h.post(event("forged2"), "application/json", "wrong-secret", now)
	if n := channeltest.CountLines(h.Log.String(), "slack webhook request rejected"); n != 2 {
		t.Errorf("%d warnings after a second streak, want 2", n)
	}
}

// tampered signs original but sends body.
func (h *harness) tampered(original, body []byte, ts time.Time) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/slack", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	slacktest.SignHeaders(r.Header, secret, ts, original)
	w := httptest.NewRecorder()
	h.ch.Webhook().ServeHTTP(w, r)
	return w
}

// unsigned sends body with a timestamp but no signature.
func (h *harness) unsigned(body []byte, ts time.Time) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "/webhooks/slack", bytes.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(ts.Unix(), 10))
	w := httptest.NewRecorder()
	h.ch.Webhook().ServeHTTP(w, r)
	return w
}

func forgedPress() []byte {
	return slacktest.InteractionBody(slacktest.Press{Channel: "D0ANN", User: "U0EVE", MessageTS: "1.2",
		ActionID: "sb_1", Value: "ap:abcdefghij0123456789:a"}.BlockActions())
}

func TestWebhookBeforeStartAsksSlackToRetry(t *testing.T) {
	h := newHookHarness(t)
	w := h.postEvent("Ev1", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "early"}.Event())
	if w.Code != http.StatusServiceUnavailable {
		t.Errorf("event before Start answered %d, want 503", w.Code)
	}
	r := httptest.NewRequest(http.MethodGet, "/webhooks/slack", nil)
	rec := httptest.NewRecorder()
	h.ch.Webhook().ServeHTTP(rec, r)
	if rec.Code != http.StatusMethodNotAllowed {
		t.Errorf("GET answered %d", rec.Code)
	}
}

func TestWebhookOffWithoutSigningSecret(t *testing.T) {
	h := newHarness(t, nil) // Socket Mode only
	w := h.postEvent("Ev1", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "x"}.Event())
	if w.Code != http.StatusNotFound || !strings.Contains(w.Body.String(), "slack.signing_secret") {
		t.Errorf("webhook without signing secret answered %d %q", w.Code, w.Body)
	}
}
