package slack_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

func TestDirectMessage(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	ctx := h.Ctx()
	env, err := h.fake.SendEvent("Ev001", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "hi &lt;there&gt; &amp; you", TS: "1700000000.000100"}.Event())
	if err != nil {
		t.Fatal(err)
	}
	in := h.Next()
	want := channels.Inbound{Platform: "slack", ChatID: "D0ANN", UserID: "U0ANN", UserName: "Ann",
		Text: "hi <there> & you", Direct: true, MessageID: "1700000000.000100", ExternalID: "Ev001"}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("inbound\n got %+v\nwant %+v", in, want)
	}
	if err := h.fake.WaitAck(ctx, env); err != nil {
		t.Error(err)
	}

	// A reply written in a thread of the DM is answered in that thread.
	if _, err := h.fake.SendEvent("Ev002", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "more",
		TS: "1700000000.000300", ThreadTS: "1700000000.000100"}.Event()); err != nil {
		t.Fatal(err)
	}
	if in := h.Next(); in.ThreadID != "1700000000.000100" || !in.Direct {
		t.Errorf("threaded DM got %+v", in)
	}
}

func TestDirectMessageThreadDirect(t *testing.T) {
	h := newHarness(t, func(o *slack.Options) { o.ThreadDirect = true })
	h.startSocket()
	if _, err := h.fake.SendEvent("Ev001", slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "hi", TS: "1700000000.000100"}.Event()); err != nil {
		t.Fatal(err)
	}
	if in := h.Next(); in.ThreadID != "1700000000.000100" {
		t.Errorf("with ThreadDirect the reply thread is %q, want the message's ts", in.ThreadID)
	}
}

func TestMentionInChannel(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	ctx := h.Ctx()
	msg := slacktest.Msg{Channel: "C0GEN", User: "U0ANN", Text: "<@" + slacktest.BotUserID + "> deploy it", TS: "1700000001.000100"}
	// The channel is not listened to: the plain message event is ignored,
	// the app_mention of the same message is delivered once.
	if _, err := h.fake.SendEvent("EvMsg", msg.Event()); err != nil {
		t.Fatal(err)
	}
	if _, err := h.fake.SendEvent("EvMention", msg.Mention()); err != nil {
		t.Fatal(err)
	}
	in := h.Next()
	want := channels.Inbound{Platform: "slack", ChatID: "C0GEN", ThreadID: "1700000001.000100", UserID: "U0ANN",
		UserName: "Ann", Text: "deploy it", MessageID: "1700000001.000100", ExternalID: "EvMention"}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("inbound\n got %+v\nwant %+v", in, want)
	}
	h.none(ctx)

	// A mention inside a thread stays in that thread.
	reply := slacktest.Msg{Channel: "C0GEN", User: "U0ANN", Text: "<@" + slacktest.BotUserID + "|switchboard>: and then?",
		TS: "1700000001.000500", ThreadTS: "1700000001.000100"}
	if _, err := h.fake.SendEvent("EvMention2", reply.Mention()); err != nil {
		t.Fatal(err)
	}
	if in := h.Next(); in.ThreadID != "1700000001.000100" || in.Text != "and then?" || in.MessageID != "1700000001.000500" {
		t.Errorf("threaded mention got %+v", in)
	}
}

func TestListenedChannel(t *testing.T) {
	h := newHarness(t, func(o *slack.Options) { o.Channels = []string{"C0OPS"} })
	h.startSocket()
	ctx := h.Ctx()
	msg := slacktest.Msg{Channel: "C0OPS", User: "U0ANN", Text: "<@" + slacktest.BotUserID + "> status", TS: "1700000002.000100"}
	if _, err := h.fake.SendEvent("EvMsg", msg.Event()); err != nil {
		t.Fatal(err)
	}
	// In a listened-to channel the message event carries mentions too; the
	// app_mention duplicate is dropped.
	if _, err := h.fake.SendEvent("EvMention", msg.Mention()); err != nil {
		t.Fatal(err)
	}
	if in := h.Next(); in.ExternalID != "EvMsg" || in.Text != "status" || in.ThreadID != "1700000002.000100" || in.Direct {
		t.Errorf("got %+v", in)
	}
	if _, err := h.fake.SendEvent("EvPlain", slacktest.Msg{Channel: "C0OPS", User: "U0ANN", Text: "no mention"}.Event()); err != nil {
		t.Fatal(err)
	}
	if in := h.Next(); in.Text != "no mention" {
		t.Errorf("got %+v", in)
	}
	h.none(ctx)
}

func TestIgnoredMessages(t *testing.T) {
	h := newHarness(t, func(o *slack.Options) { o.Channels = []string{"C0OPS"} })
	h.startSocket()
	ctx := h.Ctx()
	ignored := map[string]map[string]any{
		"own message":      slacktest.Msg{Channel: "D0ANN", User: slacktest.BotUserID, Text: "echo"}.Event(),
		"own bot post":     slacktest.Msg{Channel: "D0ANN", BotID: slacktest.BotID, Text: "echo"}.Event(),
		"other bot":        slacktest.Msg{Channel: "C0OPS", User: "U0OTHER", BotID: "B0OTHER", Text: "beep"}.Event(),
		"bot_message":      slacktest.Msg{Channel: "C0OPS", SubType: "bot_message", BotID: "B0OTHER", Text: "beep"}.Event(),
		"message_changed":  slacktest.Msg{Channel: "D0ANN", User: "U0ANN", SubType: "message_changed", Text: "edit"}.Event(),
		"message_deleted":  slacktest.Msg{Channel: "D0ANN", User: "U0ANN", SubType: "message_deleted"}.Event(),
		"channel_join":     slacktest.Msg{Channel: "C0OPS", User: "U0ANN", SubType: "channel_join", Text: "<@U0ANN> has joined"}.Event(),
		"other channel":    slacktest.Msg{Channel: "C0ELSE", User: "U0ANN", Text: "chatter"}.Event(),
		"only the mention": slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "<@" + slacktest.BotUserID + ">"}.Event(),
		"bot mention":      slacktest.Msg{Channel: "C0ELSE", User: "U0OTHER", BotID: "B0OTHER", Text: "<@" + slacktest.BotUserID + "> hi"}.Mention(),
		"mention in DM":    slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: "<@" + slacktest.BotUserID + "> hi"}.Mention(),
		"unknown type":     {"type": "made_up_event", "channel": "D0ANN"},
	}
	var envs []string
	for name, ev := range ignored {
		env, err := h.fake.SendEvent("Ev-"+strings.ReplaceAll(name, " ", "-"), ev)
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	h.none(ctx)
	for _, env := range envs {
		if err := h.fake.WaitAck(ctx, env); err != nil {
			t.Errorf("ignored event not acknowledged: %v", err)
		}
	}
	if un := h.fake.Unacked(); len(un) > 0 {
		t.Errorf("unacknowledged envelopes: %v", un)
	}
}

func TestButtonPress(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	ctx := h.Ctx()
	env, err := h.fake.SendInteraction(slacktest.Press{Channel: "D0ANN", User: "U0ANN", UserName: "ann",
		MessageTS: "1700000003.000100", TriggerID: "trig-1", ActionID: "sb_1", Value: "ap:abcdefghij0123456789:o"}.BlockActions())
	if err != nil {
		t.Fatal(err)
	}
	in := h.Next()
	if in.Press == nil {
		t.Fatalf("not a press: %+v", in)
	}
	if in.Press.Data != "ap:abcdefghij0123456789:o" || in.Press.MessageID != "1700000003.000100" || in.Press.ID == "" {
		t.Errorf("press = %+v", *in.Press)
	}
	if in.ChatID != "D0ANN" || in.UserID != "U0ANN" || in.UserName != "Ann" || !in.Direct || in.ExternalID == "" {
		t.Errorf("inbound = %+v", in)
	}
	if err := h.fake.WaitAck(ctx, env); err != nil {
		t.Error(err)
	}

	// The same press redelivered keeps its ExternalID, so the bot can
	// drop the duplicate.
	if _, err := h.fake.SendInteraction(slacktest.Press{Channel: "D0ANN", User: "U0ANN", MessageTS: "1700000003.000100",
		TriggerID: "trig-1", ActionID: "sb_1", Value: "ap:abcdefghij0123456789:o"}.BlockActions()); err != nil {
		t.Fatal(err)
	}
	if again := h.Next(); again.ExternalID != in.ExternalID {
		t.Errorf("redelivered press ExternalID %q, first %q", again.ExternalID, in.ExternalID)
	}

	// A press in a thread carries the thread; AnswerPress answers there.
	if _, err := h.fake.SendInteraction(slacktest.Press{Channel: "C0GEN", User: "U0ANN", MessageTS: "1700000003.000900",
		ThreadTS: "1700000003.000500", ActionID: "sb_2", Value: "ar:x:a"}.BlockActions()); err != nil {
		t.Fatal(err)
	}
	in = h.Next()
	if in.ThreadID != "1700000003.000500" || in.Direct {
		t.Errorf("threaded press inbound = %+v", in)
	}
	if err := h.ch.AnswerPress(ctx, *in.Press, "Only **approvers** can decide."); err != nil {
		t.Fatalf("AnswerPress: %v", err)
	}
	eph := h.fake.Posted("C0GEN", "chat.postEphemeral")
	if len(eph) != 1 || eph[0].User != "U0ANN" || eph[0].ThreadTS != "1700000003.000500" || eph[0].Section != "Only *approvers* can decide." {
		t.Errorf("ephemeral answer = %+v", eph)
	}
	if err := h.ch.AnswerPress(ctx, *in.Press, ""); err != nil {
		t.Errorf("AnswerPress without text: %v", err)
	}
	if n := h.fake.Requests("chat.postEphemeral"); n != 1 {
		t.Errorf("AnswerPress without text posted; %d ephemerals", n)
	}
	if err := h.ch.AnswerPress(ctx, channels.ButtonPress{ID: "cb"}, "x"); err == nil {
		t.Error("AnswerPress accepted a foreign press id")
	}
}

func TestUserNameFallsBackToID(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket()
	if _, err := h.fake.SendEvent("Ev1", slacktest.Msg{Channel: "D0BOB", User: "U0BOB", Text: "hello"}.Event()); err != nil {
		t.Fatal(err)
	}
	if in := h.Next(); in.UserName != "U0BOB" {
		t.Errorf("unknown user named %q, want the id", in.UserName)
	}
	// Names are cached: a second message does not ask again.
	before := h.fake.Requests("users.info")
	if _, err := h.fake.SendEvent("Ev2", slacktest.Msg{Channel: "D0BOB", User: "U0BOB", Text: "again"}.Event()); err != nil {
		t.Fatal(err)
	}
	h.Next()
	if got := h.fake.Requests("users.info"); got != before {
		t.Errorf("users.info called %d more times for a cached user", got-before)
	}
}

func TestHandlerPanicDoesNotStopTheChannel(t *testing.T) {
	h := newHarness(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	got := make(chan string, 2)
	go func() {
		done <- h.ch.Start(ctx, func(_ context.Context, in channels.Inbound) error {
			if in.Text == "boom" {
				panic("boom")
			}
			got <- in.Text
			return nil
		})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Start: %v", err)
		}
	}()
	if err := h.fake.WaitConnections(h.Ctx(), 1); err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"boom", "fine"} {
		if _, err := h.fake.SendEvent("Ev-"+text, slacktest.Msg{Channel: "D0ANN", User: "U0ANN", Text: text}.Event()); err != nil {
			t.Fatal(err)
		}
	}
	if text := <-got; text != "fine" {
		t.Errorf("after a panic got %q", text)
	}
	if !strings.Contains(h.Log.String(), "panicked") {
		t.Errorf("panic not logged:\n%s", h.Log)
	}
}
