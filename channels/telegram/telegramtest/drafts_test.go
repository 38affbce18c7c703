package telegramtest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func TestSendMessageDraft(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s, bot.WithSkipGetMe())
	ctx := testContext(t)
	before := time.Now()
	for _, text := range []string{"Hel", "<b>Hello</b>"} {
		ok, err := b.SendMessageDraft(ctx, &bot.SendMessageDraftParams{ChatID: 9, MessageThreadID: 4, DraftID: "17", Text: text, ParseMode: models.ParseModeHTML})
		if err != nil || !ok {
			t.Fatalf("SendMessageDraft(%q) = %v, %v", text, ok, err)
		}
	}
	drafts := s.Drafts(9)
	if len(drafts) != 2 {
		t.Fatalf("Drafts = %+v, want 2", drafts)
	}
	last := drafts[1]
	if last.DraftID != 17 || last.ThreadID != 4 || last.Text != "<b>Hello</b>" || last.Visible != "Hello" || last.Time.Before(before) {
		t.Errorf("last draft = %+v", last)
	}
	if msgs := s.Messages(9); len(msgs) != 0 {
		t.Errorf("a draft became a message: %+v", msgs)
	}

	for name, p := range map[string]*bot.SendMessageDraftParams{
		"zero draft id": {ChatID: 9, DraftID: "0", Text: "x"},
		"empty text":    {ChatID: 9, DraftID: "1", Text: " "},
		"a group":       {ChatID: -9, DraftID: "1", Text: "x"},
		"bad HTML":      {ChatID: 9, DraftID: "1", Text: "<b>x", ParseMode: models.ParseModeHTML},
	} {
		if _, err := b.SendMessageDraft(ctx, p); !errors.Is(err, bot.ErrorBadRequest) {
			t.Errorf("%s: err = %v, want Bad Request", name, err)
		}
	}
	if got := len(s.Drafts(9)); got != 2 {
		t.Errorf("refused drafts were recorded: %d drafts", got)
	}

	s.FloodChat(9, 3)
	var tooMany *bot.TooManyRequestsError
	if _, err := b.SendMessageDraft(ctx, &bot.SendMessageDraftParams{ChatID: 9, DraftID: "17", Text: "x"}); !errors.As(err, &tooMany) || tooMany.RetryAfter != 3 {
		t.Errorf("draft into a flood: err = %v, want 429 retry_after 3", err)
	}

	s.RemoveMethod("sendMessageDraft")
	_, err := b.SendMessageDraft(ctx, &bot.SendMessageDraftParams{ChatID: 10, DraftID: "1", Text: "x"})
	if !errors.Is(err, bot.ErrorNotFound) || !strings.Contains(err.Error(), "Not Found") {
		t.Errorf("removed method: err = %v, want 404 Not Found", err)
	}
}

func TestEditsAndMessageShowWhatAReaderSees(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s, bot.WithSkipGetMe())
	ctx := testContext(t)
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 8, Text: "v1"})
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now()
	if _, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 8, MessageID: sent.ID, Text: "<i>v2</i>", ParseMode: models.ParseModeHTML}); err != nil {
		t.Fatal(err)
	}
	if m, ok := s.Message(8, sent.ID); !ok || m.Visible != "v2" || m.Edits != 1 {
		t.Errorf("Message = %+v, %v; want v2 after one edit", m, ok)
	}
	if e := s.Edits(8); len(e) != 1 || e[0].Time.Before(before) {
		t.Errorf("Edits = %+v, want one stamped after %v", e, before)
	}
	if _, ok := s.Message(8, sent.ID+1); ok {
		t.Error("Message found a message never sent")
	}
}
