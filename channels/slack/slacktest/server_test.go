package slacktest_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/slack-go/slack"
	"go.uber.org/goleak"

	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSignMatchesSlackVerifier(t *testing.T) {
	body := []byte(`{"type":"event_callback"}`)
	h := http.Header{}
	slacktest.SignHeaders(h, "s3cret", time.Now(), body)
	sv, err := slack.NewSecretsVerifier(h, "s3cret")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = sv.Write(body)
	if err := sv.Ensure(); err != nil {
		t.Errorf("slack-go rejects our signature: %v", err)
	}
	sv, _ = slack.NewSecretsVerifier(h, "s3cret")
	_, _ = sv.Write([]byte(`{"type":"other"}`))
	if sv.Ensure() == nil {
		t.Error("signature valid for another body")
	}
}

func TestWebAPI(t *testing.T) {
	fake := slacktest.NewServer("xoxb-good", "xapp-good")
	defer fake.Close()
	api := slack.New("xoxb-good", slack.OptionAPIURL(fake.URL()))
	c := ctx(t)

	r, err := api.AuthTestContext(c)
	if err != nil || r.UserID != slacktest.BotUserID || r.BotID != slacktest.BotID {
		t.Fatalf("auth.test = %+v, %v", r, err)
	}
	ch, ts, err := api.PostMessageContext(c, "C1", slack.MsgOptionText("hi", false), slack.MsgOptionTS("1.1"),
		slack.MsgOptionBlocks(slack.NewActionBlock("", slack.NewButtonBlockElement("a1", "v1",
			slack.NewTextBlockObject(slack.PlainTextType, "Go", false, false)))))
	if err != nil || ch != "C1" || ts == "" {
		t.Fatalf("postMessage = %q %q %v", ch, ts, err)
	}
	msgs := fake.Posted("C1", "chat.postMessage")
	if len(msgs) != 1 || msgs[0].Text != "hi" || msgs[0].ThreadTS != "1.1" ||
		len(msgs[0].Buttons) != 1 || msgs[0].Buttons[0][0] != (slacktest.Button{ActionID: "a1", Label: "Go", Value: "v1"}) {
		t.Errorf("recorded %+v", msgs)
	}
	if _, _, _, err := api.UpdateMessageContext(c, "C1", "9.9", slack.MsgOptionText("x", false)); err == nil {
		t.Error("update of an unknown ts succeeded")
	}

	fake.RateLimit("chat.postMessage", 7, 1)
	_, _, err = api.PostMessageContext(c, "C1", slack.MsgOptionText("hi", false))
	var rl *slack.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter != 7*time.Second {
		t.Errorf("rate limited post = %v", err)
	}
	fake.Fail("chat.postMessage", "not_in_channel", 1)
	if _, _, err := api.PostMessageContext(c, "C1", slack.MsgOptionText("hi", false)); err == nil || err.Error() != "not_in_channel" {
		t.Errorf("scripted failure = %v", err)
	}
	bad := slack.New("xoxb-bad", slack.OptionAPIURL(fake.URL()))
	if _, err := bad.AuthTestContext(c); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("wrong token = %v", err)
	}
	if got := fake.Requests("chat.postMessage"); got != 3 {
		t.Errorf("counted %d posts", got)
	}
}

func TestSocketModeProtocol(t *testing.T) {
	fake := slacktest.NewServer("xoxb-good", "xapp-good")
	defer fake.Close()
	c := ctx(t)
	api := slack.New("xoxb-good", slack.OptionAPIURL(fake.URL()), slack.OptionAppLevelToken("xapp-good"))
	_, wsURL, err := api.StartSocketModeContext(c)
	if err != nil {
		t.Fatalf("apps.connections.open: %v", err)
	}
	conn, resp, err := websocket.DefaultDialer.DialContext(c, wsURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = resp.Body.Close()
	var hello struct{ Type string }
	if err := conn.ReadJSON(&hello); err != nil || hello.Type != "hello" {
		t.Fatalf("first message %+v, %v", hello, err)
	}
	if err := fake.WaitConnections(c, 1); err != nil {
		t.Fatal(err)
	}
	id, err := fake.SendEvent("Ev1", slacktest.Msg{Channel: "D1", User: "U1", Text: "hi"}.Event())
	if err != nil {
		t.Fatal(err)
	}
	var env struct {
		EnvelopeID string `json:"envelope_id"`
		Type       string
		Payload    struct {
			EventID string `json:"event_id"`
			Event   struct{ Type, Text, ChannelType string }
		}
	}
	if err := conn.ReadJSON(&env); err != nil || env.EnvelopeID != id || env.Type != "events_api" ||
		env.Payload.EventID != "Ev1" || env.Payload.Event.Text != "hi" {
		t.Fatalf("envelope %+v, %v", env, err)
	}
	if un := fake.Unacked(); len(un) != 1 || un[0] != id {
		t.Errorf("unacked before the ack = %v", un)
	}
	if err := conn.WriteJSON(map[string]string{"envelope_id": id}); err != nil {
		t.Fatal(err)
	}
	if err := fake.WaitAck(c, id); err != nil {
		t.Fatal(err)
	}
	fake.DropConnections()
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			break // dropped (pings arrive as control frames, not messages)
		}
	}

	bad := slack.New("xoxb-good", slack.OptionAPIURL(fake.URL()), slack.OptionAppLevelToken("xapp-bad"))
	if _, _, err := bad.StartSocketModeContext(c); err == nil || err.Error() != "invalid_auth" {
		t.Errorf("wrong app token = %v", err)
	}
}
