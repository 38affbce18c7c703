package slacktest_test

import (
	"errors"
	"testing"

	"github.com/slack-go/slack"

	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// code is the Slack error code of err, "" for none.
func code(err error) string {
	var se slack.SlackErrorResponse
	if errors.As(err, &se) {
		return se.Err
	}
	return ""
}

func TestStreamingMethods(t *testing.T) {
	fake := slacktest.NewServer("xoxb-good", "xapp-good")
	defer fake.Close()
	api := slack.New("xoxb-good", slack.OptionAPIURL(fake.URL()))
	c := ctx(t)

	if _, _, err := api.StartStreamContext(c, "C1", slack.MsgOptionMarkdownText("x")); code(err) != "invalid_arguments" {
		t.Errorf("startStream without thread_ts: %v", err)
	}
	if _, _, err := api.StartStreamContext(c, "C1", slack.MsgOptionTS("1.1")); code(err) != "missing_recipient_user_id" {
		t.Errorf("startStream in a channel without recipient: %v", err)
	}
	_, ts, err := api.StartStreamContext(c, "C1", slack.MsgOptionTS("1.1"), slack.MsgOptionMarkdownText("Hel"),
		slack.MsgOptionRecipientUserID("U1"), slack.MsgOptionRecipientTeamID(slacktest.TeamID))
	if err != nil || ts == "" {
		t.Fatalf("startStream = %q, %v", ts, err)
	}
	if _, _, err := api.AppendStreamContext(c, "C1", ts, slack.MsgOptionMarkdownText("lo")); err != nil {
		t.Fatal(err)
	}
	if got, _ := fake.Shown("C1", ts); got != "Hello" || !fake.Streaming("C1", ts) {
		t.Errorf("after an append: %q, streaming %v", got, fake.Streaming("C1", ts))
	}
	if _, _, err := api.StopStreamContext(c, "C1", ts, slack.MsgOptionMarkdownText("!")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := api.StopStreamContext(c, "C1", ts); code(err) != "message_not_in_streaming_state" {
		t.Errorf("second stop: %v", err)
	}
	if _, _, err := api.AppendStreamContext(c, "C1", ts, slack.MsgOptionMarkdownText("?")); code(err) != "message_not_in_streaming_state" {
		t.Errorf("append after stop: %v", err)
	}
	if _, _, _, err := api.UpdateMessageContext(c, "C1", ts, slack.MsgOptionText("Final", false)); err != nil {
		t.Fatalf("update of a streamed message: %v", err)
	}
	if got := fake.Visible("C1"); len(got) != 1 || got[0] != "Final" {
		t.Errorf("visible = %q", got)
	}
	calls := fake.Messages("C1")
	if len(calls) != 4 || calls[0].Method != "chat.startStream" || calls[0].RecipientUser != "U1" || calls[0].At.IsZero() {
		t.Errorf("calls = %+v", calls)
	}

	fake.RateLimit("chat.appendStream", 3, 1)
	var rl *slack.RateLimitedError
	if _, _, err := api.AppendStreamContext(c, "C1", ts, slack.MsgOptionMarkdownText("x")); !errors.As(err, &rl) {
		t.Errorf("scripted 429: %v", err)
	}
	fake.DisableStreaming()
	if _, _, err := api.StartStreamContext(c, "D1", slack.MsgOptionTS("1.1")); code(err) != "unknown_method" {
		t.Errorf("streaming off: %v", err)
	}
}
