package main

import (
	"bytes"
	"context"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// seen is what the daemon's Bot API library decodes from a fake: the
// bot's user, a message it sent and its edit, and an update it polled.
type seen struct {
	me               models.User
	sent, edited     models.Message
	update           models.Message
	watched          []string
	commands, action bool
}

// talk drives tg with the Bot API library the daemon uses, as a daemon
// answering private messages does.
func talk(t *testing.T, tg telegram) seen {
	t.Helper()
	var s seen
	tg.Watch(func(text string) { s.watched = append(s.watched, text) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	polled := make(chan *models.Update, 1)
	b, err := bot.New(token, bot.WithServerURL(tg.URL()), bot.WithHTTPClient(2*time.Second, http.DefaultClient),
		bot.WithDefaultHandler(func(_ context.Context, _ *bot.Bot, u *models.Update) { polled <- u }),
		bot.WithErrorsHandler(func(error) {})) // the poll cut short at the end
	if err != nil {
		t.Fatalf("bot.New (getMe): %v", err)
	}
	me, err := b.GetMe(ctx)
	if err != nil {
		t.Fatalf("getMe: %v", err)
	}
	s.me = *me
	if _, err := b.DeleteWebhook(ctx, &bot.DeleteWebhookParams{}); err != nil {
		t.Fatalf("deleteWebhook: %v", err)
	}
	s.commands, err = b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "help", Description: "what I do"}}})
	if err != nil {
		t.Fatalf("setMyCommands: %v", err)
	}
	s.action, err = b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: int64(42), Action: models.ChatActionTyping})
	if err != nil {
		t.Fatalf("sendChatAction: %v", err)
	}
	// Text that a careless form reader would cut or mangle.
	text := "echo: m7 \"quoted\"\r\n\r\n--boundary? name=\"x\" ünïcode \\"
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: int64(42), Text: text})
	if err != nil {
		t.Fatalf("sendMessage: %v", err)
	}
	s.sent = *sent
	edited, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: int64(42), MessageID: sent.ID, Text: "edited"})
	if err != nil {
		t.Fatalf("editMessageText: %v", err)
	}
	s.edited = *edited

	tg.SendText(42, 7, "User 7", "m3 from \"user\"")
	go b.Start(ctx)
	select {
	case u := <-polled:
		s.update = *u.Message
	case <-ctx.Done():
		t.Fatal("no update polled")
	}
	cancel()
	return s
}

// TestLeanTelegramAnswersAsTelegramTestDoes makes the same calls of both
// fakes and wants the same answers, apart from ids and dates.
func TestLeanTelegramAnswersAsTelegramTestDoes(t *testing.T) {
	lean := newLeanTelegram(token)
	defer lean.Close()
	full := fullTelegram{telegramtest.NewServer(token)}
	defer full.Close()
	got, want := talk(t, lean), talk(t, full)
	if got.me != want.me || got.me.ID != 123456789 {
		t.Errorf("getMe: lean %+v, telegramtest %+v", got.me, want.me)
	}
	if !got.commands || !got.action {
		t.Errorf("setMyCommands %v, sendChatAction %v; want true", got.commands, got.action)
	}
	same := func(what string, g, w models.Message) {
		t.Helper()
		if g.ID == 0 || g.Date == 0 {
			t.Errorf("%s: no id or date in %+v", what, g)
		}
		g.ID, g.Date, w.ID, w.Date = 0, 0, 0, 0
		g.EditDate, w.EditDate = 0, 0 // telegramtest marks an edit; the daemon does not read it
		if g.Text != w.Text || g.Chat != w.Chat || *g.From != *w.From {
			t.Errorf("%s: lean %+v (chat %+v, from %+v), telegramtest %+v (chat %+v, from %+v)",
				what, g, g.Chat, g.From, w, w.Chat, w.From)
		}
	}
	same("sendMessage", got.sent, want.sent)
	same("editMessageText", got.edited, want.edited)
	same("polled update", got.update, want.update)
	if got.edited.ID != got.sent.ID || got.edited.Text != "edited" {
		t.Errorf("the edit answered message %d %q, want message %d \"edited\"", got.edited.ID, got.edited.Text, got.sent.ID)
	}
	if got.update.Text != `m3 from "user"` || got.update.From.ID != 7 || got.update.Chat.ID != 42 {
		t.Errorf("polled %+v from %+v", got.update, got.update.From)
	}
	if len(got.watched) != 1 || got.watched[0] != want.watched[0] || !strings.Contains(got.watched[0], "\r\n\r\n--boundary?") {
		t.Errorf("watched %q, telegramtest %q", got.watched, want.watched)
	}
	if n, why := lean.complaints(); n != 0 {
		t.Errorf("the lean fake refused %d calls: %s", n, why)
	}
	lean.mu.Lock()
	queued := len(lean.queue)
	lean.mu.Unlock()
	if queued > 1 { // the update polled is confirmed by the next poll, if one came
		t.Errorf("%d updates still queued, want the polled one at most", queued)
	}
}

func TestLeanTelegramRefusesWhatItCannotRead(t *testing.T) {
	lean := newLeanTelegram(token)
	defer lean.Close()
	wantRefused(t, lean.URL(), lean.complaints, map[string]refusal{
		"another token":   {"/bot1:other/getMe", "", "", http.StatusNotFound},
		"unknown method":  {"/bot" + token + "/sendPhoto", "", "", http.StatusBadRequest},
		"JSON body":       {"/bot" + token + "/sendMessage", "application/json", `{"chat_id":1,"text":"x"}`, http.StatusBadRequest},
		"unended form":    {"/bot" + token + "/sendMessage", "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n1\r\n", http.StatusBadRequest},
		"chat not number": {"/bot" + token + "/sendMessage", "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n@x\r\n--b--\r\n", http.StatusBadRequest},
		"no text":         {"/bot" + token + "/sendMessage", "multipart/form-data; boundary=b", "--b\r\nContent-Disposition: form-data; name=\"chat_id\"\r\n\r\n1\r\n--b--\r\n", http.StatusBadRequest},
	})
}

// TestLeanTelegramConfirmsUpdatesByOffset polls as the Bot API defines it:
// an offset confirms (and forgets) the updates below it, and a poll with a
// timeout waits for the next update.
func TestLeanTelegramConfirmsUpdatesByOffset(t *testing.T) {
	lean := newLeanTelegram(token)
	defer lean.Close()
	poll := func(offset, timeout int) []int64 {
		t.Helper()
		var body bytes.Buffer
		form := multipart.NewWriter(&body)
		_ = form.WriteField("offset", strconv.Itoa(offset))
		_ = form.WriteField("timeout", strconv.Itoa(timeout))
		_ = form.Close()
		resp, err := http.Post(lean.URL()+"/bot"+token+"/getUpdates", form.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var r struct {
			OK     bool
			Result []struct {
				UpdateID int64 `json:"update_id"`
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil || !r.OK {
			t.Fatalf("getUpdates(%d): %v, ok %v", offset, err, r.OK)
		}
		var ids []int64
		for _, u := range r.Result {
			ids = append(ids, u.UpdateID)
		}
		return ids
	}
	lean.SendText(1, 1, "a", "one")
	lean.SendText(2, 2, "b", "two")
	if got := poll(0, 0); !slices.Equal(got, []int64{1, 2}) {
		t.Errorf("first poll: %v, want [1 2]", got)
	}
	if got := poll(2, 0); !slices.Equal(got, []int64{2}) {
		t.Errorf("offset 2: %v, want [2]", got)
	}
	if got := poll(3, 0); len(got) != 0 {
		t.Errorf("offset 3: %v, want none", got)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		lean.SendText(3, 3, "c", "three")
	}()
	if got := poll(3, 10); !slices.Equal(got, []int64{3}) {
		t.Errorf("a waiting poll: %v, want [3]", got)
	}
	if n, why := lean.complaints(); n != 0 {
		t.Errorf("the lean fake refused %d calls: %s", n, why)
	}
}
