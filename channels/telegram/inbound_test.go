package telegram_test

import (
	"context"
	"reflect"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func TestReceiveText(t *testing.T) {
	h := newHarness(t, nil)
	h.Start(nil)
	h.waitPolling()

	upd := h.fake.SendText(42, 42, "Ann", "hello *bot*")
	in := h.Next()
	want := channels.Inbound{
		Platform: "telegram", ChatID: "42", UserID: "42", UserName: "Ann", Text: "hello *bot*",
		Direct: true, MessageID: "1", ExternalID: strconv.FormatInt(upd, 10),
	}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("inbound = %+v\nwant      %+v", in, want)
	}

	upd = h.fake.SendTextInChat(-100, 7, 5, "Bo", "in a topic")
	in = h.Next()
	if in.ChatID != "-100" || in.ThreadID != "7" || in.Direct || in.UserID != "5" || in.UserName != "Bo" ||
		in.Text != "in a topic" || in.ExternalID != strconv.FormatInt(upd, 10) {
		t.Errorf("topic inbound = %+v", in)
	}
	h.fake.SendTextInChat(-100, 0, 5, "Bo", "no topic")
	if in := h.Next(); in.ThreadID != "" || in.Text != "no topic" {
		t.Errorf("group inbound = %+v", in)
	}
}

func TestButtonPress(t *testing.T) {
	h := newHarness(t, nil)
	h.Start(nil)
	h.waitPolling()
	ctx := h.Ctx()
	to := channels.Address{Platform: "telegram", ChatID: "-200"}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "Allow `rm -rf /tmp/x`?",
		Buttons: [][]channels.Button{{{Label: "Allow once", Data: "ap:1:once"}, {Label: "Deny", Data: "ap:1:deny"}}}})
	if err != nil {
		t.Fatal(err)
	}
	mid, _ := strconv.Atoi(id)
	upd := h.fake.PressButton(-200, 9, mid, "ap:1:deny")
	in := h.Next()
	if in.Press == nil || in.Press.Data != "ap:1:deny" || in.Press.MessageID != id || in.Press.ID == "" {
		t.Fatalf("press = %+v", in.Press)
	}
	if in.ChatID != "-200" || in.UserID != "9" || in.MessageID != id || in.Text != "" ||
		in.ExternalID != strconv.FormatInt(upd, 10) || in.Direct {
		t.Errorf("press inbound = %+v", in)
	}
	if err := h.ch.AnswerPress(ctx, *in.Press, "Denied"); err != nil {
		t.Fatalf("AnswerPress: %v", err)
	}
	answers := h.fake.CallbackAnswers()
	if len(answers) != 1 || answers[0] != (telegramtest.CallbackAnswer{ID: in.Press.ID, Text: "Denied"}) {
		t.Errorf("answers = %+v", answers)
	}
}

func TestRedeliveredUpdateReachesHandlerAgain(t *testing.T) {
	h := newHarness(t, nil)
	h.Start(nil)
	h.waitPolling()
	upd := h.fake.SendText(3, 3, "Cy", "once")
	first := h.Next()
	if err := h.fake.Redeliver(upd); err != nil {
		t.Fatal(err)
	}
	second := h.Next()
	if !reflect.DeepEqual(second, first) || second.ExternalID != strconv.FormatInt(upd, 10) {
		t.Errorf("redelivered = %+v, want %+v", second, first)
	}
}

func TestUpdateConfirmedOnlyAfterHandling(t *testing.T) {
	h := newHarness(t, nil)
	entered := make(chan channels.Inbound, 10)
	release := make(chan struct{})
	h.Start(func(ctx context.Context, in channels.Inbound) error {
		entered <- in
		select {
		case <-release:
		case <-ctx.Done(): // the process "crashes" mid-handling
		}
		return nil
	})
	h.waitPolling()
	upd := h.fake.SendText(4, 4, "Di", "important")
	<-entered
	polls := h.fake.Requests("getUpdates")
	time.Sleep(300 * time.Millisecond) // give a confirming poll the chance to happen
	if got := h.fake.Pending(); len(got) != 1 || got[0] != upd {
		t.Fatalf("update confirmed before its handler returned: pending %v", got)
	}
	if got := h.fake.Requests("getUpdates"); got != polls {
		t.Errorf("polled %d more times while the handler ran", got-polls)
	}

	// Crash before the handler finishes: a new instance gets the update again.
	h.Stop()
	restarted := newHarnessOn(t, h.fake, nil)
	restarted.Start(nil)
	in := restarted.Next()
	if in.ExternalID != strconv.FormatInt(upd, 10) || in.Text != "important" {
		t.Errorf("after restart got %+v", in)
	}
	close(release)
}

func TestNonTextMessages(t *testing.T) {
	h := newHarness(t, nil)
	h.Start(nil)
	h.waitPolling()
	ctx := h.Ctx()
	sticker := map[string]any{"sticker": map[string]any{"file_id": "s1", "file_unique_id": "u1", "type": "regular", "width": 512, "height": 512}}
	_, stickerID := h.fake.PushMessage(telegramtest.Incoming{ChatID: 9, UserID: 9, Extra: sticker})
	msgs, err := h.fake.WaitMessages(ctx, 9, 1)
	if err != nil {
		t.Fatal(err)
	}
	if msgs[0].Text != "I can only read text messages for now." || msgs[0].ReplyTo != stickerID {
		t.Errorf("reply to a sticker = %+v", msgs[0])
	}

	photo := func(group string) map[string]any {
		return map[string]any{"media_group_id": group, "photo": []any{map[string]any{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}}}
	}
	h.fake.PushMessage(telegramtest.Incoming{ChatID: 9, UserID: 9, Extra: photo("album")})
	h.fake.PushMessage(telegramtest.Incoming{ChatID: 9, UserID: 9, Extra: photo("album")})
	h.fake.PushMessage(telegramtest.Incoming{ChatID: -9, UserID: 9, Extra: sticker})          // group: ignored
	h.fake.PushMessage(telegramtest.Incoming{ChatID: 9, UserID: 8, IsBot: true, Text: "bot"}) // bots: ignored
	h.fake.PushMessage(telegramtest.Incoming{ChatID: 9, UserID: 9, Text: "edit", Edited: true})
	h.fake.SendText(9, 9, "Ed", "real text")

	// Updates are handled in order: the album (handed over when the chat's
	// next update came), then the text.
	if in := h.Next(); in.Text != "" || len(in.Attachments) != 2 {
		t.Errorf("first event reaching the handler = %+v, want the album of two photos", in)
	}
	if in := h.Next(); in.Text != "real text" {
		t.Errorf("second event reaching the handler = %+v, want the text message", in)
	}
	if got := len(h.fake.Messages(9)); got != 1 {
		t.Errorf("%d replies in the private chat, want 1 (the sticker)", got)
	}
	if got := h.fake.Messages(-9); len(got) != 0 {
		t.Errorf("replied in a group: %+v", got)
	}
}

func TestInterleavedAlbumsOneInboundPerChat(t *testing.T) {
	h := newHarness(t, nil)
	photo := func(group string) map[string]any {
		return map[string]any{"media_group_id": group, "photo": []any{map[string]any{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}}}
	}
	// Two chats send albums at the same time; their photos interleave.
	for range 3 {
		h.fake.PushMessage(telegramtest.Incoming{ChatID: 11, UserID: 11, Extra: photo("g11")})
		h.fake.PushMessage(telegramtest.Incoming{ChatID: 12, UserID: 12, Extra: photo("g12")})
	}
	h.fake.SendText(11, 11, "Ann", "done 11")
	h.fake.SendText(12, 12, "Bo", "done 12")
	h.Start(nil)
	// Each chat's updates are handled in order: its album, then its text.
	next := map[string][]channels.Inbound{}
	for range 4 {
		in := h.Next()
		next[in.ChatID] = append(next[in.ChatID], in)
	}
	for _, chat := range []string{"11", "12"} {
		got := next[chat]
		if len(got) != 2 || len(got[0].Attachments) != 3 || got[1].Text != "done "+chat {
			t.Errorf("chat %s got %+v, want one album of three photos, then its text", chat, got)
		}
	}
	for _, chat := range []int64{11, 12} {
		if got := h.fake.Messages(chat); len(got) != 0 {
			t.Errorf("chat %d was answered %+v, want nothing", chat, got)
		}
	}
}

// A photo's caption is the person's message, and the album it came with
// is one message.
func TestPhotoCaptionIsAnswered(t *testing.T) {
	h := newHarness(t, nil)
	h.Start(nil)
	h.waitPolling()
	photo := func(caption string) map[string]any {
		m := map[string]any{"media_group_id": "shots", "photo": []any{map[string]any{"file_id": "p", "file_unique_id": "p", "width": 1, "height": 1}}}
		if caption != "" {
			m["caption"] = caption
		}
		return m
	}
	h.fake.PushMessage(telegramtest.Incoming{ChatID: 19, UserID: 19, Extra: photo("why is this build red?")})
	h.fake.PushMessage(telegramtest.Incoming{ChatID: 19, UserID: 19, Extra: photo("")})
	h.fake.SendText(19, 19, "Ed", "and this")

	if in := h.Next(); in.Text != "why is this build red?" || len(in.Attachments) != 2 {
		t.Errorf("captioned album reached the handler as %q with %d attachments", in.Text, len(in.Attachments))
	}
	if next := h.Next(); next.Text != "and this" {
		t.Errorf("next event = %+v, want the text message", next)
	}
	if got := h.fake.Messages(19); len(got) != 0 {
		t.Errorf("the captioned album was answered %+v, want nothing but the agent's answer", got)
	}
}
