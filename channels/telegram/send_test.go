package telegram_test

import (
	"errors"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/markup"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func TestSendLongMarkdown(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	report, codeLines := channeltest.LongReport("All **green** & <fine>.", 150, "fmt.Println(%d, \"a < b && c > d\")")
	_, userMsg := h.fake.PushMessage(telegramtest.Incoming{ChatID: 50, UserID: 50, Text: "report?"})
	to := channels.Address{Platform: "telegram", ChatID: "50"}
	buttons := [][]channels.Button{{{Label: "OK", Data: "ok"}}}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: report, Buttons: buttons, ReplyTo: strconv.Itoa(userMsg)})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := h.fake.Messages(50)
	if len(msgs) < 3 {
		t.Fatalf("10 000 characters sent as %d messages", len(msgs))
	}
	var visible strings.Builder
	for i, m := range msgs {
		if n := utf16Len(m.Text); n > 4096 {
			t.Errorf("part %d is %d UTF-16 units", i, n)
		}
		if m.ParseMode != "HTML" {
			t.Errorf("part %d parse mode %q", i, m.ParseMode)
		}
		if _, err := telegramtest.ParseHTML(m.Text); err != nil {
			t.Errorf("part %d is not valid Telegram HTML: %v", i, err)
		}
		if (m.ReplyTo == userMsg) != (i == 0) {
			t.Errorf("part %d reply-to %d", i, m.ReplyTo)
		}
		if (len(m.Buttons) > 0) != (i == len(msgs)-1) {
			t.Errorf("part %d buttons %v", i, m.Buttons)
		}
		visible.WriteString(m.Visible + "\n")
	}
	if last := msgs[len(msgs)-1]; id != strconv.Itoa(last.ID) {
		t.Errorf("Send returned %s, last message is %d", id, last.ID)
	}
	for _, line := range codeLines {
		if !strings.Contains(visible.String(), line+"\n") {
			t.Fatalf("code line %q missing or cut", line)
		}
	}
	if !strings.Contains(visible.String(), "All green & <fine>.") {
		t.Error("escaped text not shown as written")
	}
}

func TestSendToTopicWithReply(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	_, userMsg := h.fake.PushMessage(telegramtest.Incoming{ChatID: -300, ThreadID: 12, UserID: 1, Text: "q"})
	to := channels.Address{Platform: "telegram", ChatID: "-300", ThreadID: "12"}
	if _, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "answer", ReplyTo: strconv.Itoa(userMsg)}); err != nil {
		t.Fatal(err)
	}
	m := h.fake.Messages(-300)[0]
	if m.ThreadID != 12 || m.ReplyTo != userMsg || m.Text != "answer" {
		t.Errorf("message = %+v", m)
	}
	// A reply target that is gone does not stop the message.
	if _, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "late", ReplyTo: "999"}); err != nil {
		t.Errorf("reply to a missing message: %v", err)
	}
}

func TestSendWaitsOutRateLimit(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.Fail("sendMessage", 429, 1, 1)
	to := channels.Address{Platform: "telegram", ChatID: "60"}
	id, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to, Text: "after the limit"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := h.fake.Requests("sendMessage"); got != 2 {
		t.Errorf("sendMessage called %d times, want 2", got)
	}
	msgs := h.fake.Messages(60)
	if len(msgs) != 1 || strconv.Itoa(msgs[0].ID) != id || msgs[0].Text != "after the limit" {
		t.Errorf("messages = %+v, id %s", msgs, id)
	}
}

func TestSendLongRateLimitReturnsRetryAfter(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.Fail("sendMessage", 429, 120, 1)
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "61"}, Text: "x"})
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 120*time.Second {
		t.Fatalf("err = %v, want RetryAfterError of 2m", err)
	}
	if errors.Is(err, channels.ErrPermanent) {
		t.Error("rate limit marked permanent")
	}

	h2 := newHarness(t, func(o *telegram.Options) { o.MaxRetries = 1 })
	h2.fake.Fail("sendMessage", 429, 1, 5)
	_, err = h2.ch.Send(h2.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "61"}, Text: "x"})
	if !errors.As(err, &ra) || ra.After != time.Second {
		t.Fatalf("err = %v, want RetryAfterError of 1s after the retries", err)
	}
	if got := h2.fake.Requests("sendMessage"); got != 2 {
		t.Errorf("sendMessage called %d times with MaxRetries 1, want 2", got)
	}
}

func TestSendErrorClasses(t *testing.T) {
	tests := []struct {
		name      string
		failure   telegramtest.Failure
		permanent bool
	}{
		{"chat not found", telegramtest.Failure{Status: 400, Description: "Bad Request: chat not found"}, true},
		{"blocked", telegramtest.Failure{Status: 403, Description: "Forbidden: bot was blocked by the user"}, true},
		{"server error", telegramtest.Failure{Status: 500}, false},
		{"bad gateway", telegramtest.Failure{Status: 502, Description: "Bad Gateway"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, nil)
			h.fake.FailWith("sendMessage", tt.failure)
			_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "70"}, Text: "x"})
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if errors.Is(err, channels.ErrPermanent) != tt.permanent {
				t.Errorf("err = %v, permanent = %v, want %v", err, !tt.permanent, tt.permanent)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error leaks the token: %v", err)
			}
		})
	}
}

func TestSendRejectsBadInput(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	tests := []channels.Outbound{
		{To: channels.Address{Platform: "telegram", ChatID: "1"}, Text: "  "},
		{To: channels.Address{Platform: "telegram", ChatID: "x y"}, Text: "hi"},
		{To: channels.Address{Platform: "slack", ChatID: "1"}, Text: "hi"},
		{To: channels.Address{Platform: "telegram", ChatID: "1", ThreadID: "t"}, Text: "hi"},
		{To: channels.Address{Platform: "telegram", ChatID: "1"}, Text: "hi", ReplyTo: "abc"},
		{To: channels.Address{Platform: "telegram", ChatID: "1"}, Text: "hi", Buttons: [][]channels.Button{{{Label: "A", Data: strings.Repeat("d", 65)}}}},
		{To: channels.Address{Platform: "telegram", ChatID: "1"}, Text: "hi", Buttons: [][]channels.Button{{{Label: "", Data: "d"}}}},
	}
	for _, msg := range tests {
		if _, err := h.ch.Send(ctx, msg); !errors.Is(err, channels.ErrPermanent) {
			t.Errorf("Send(%+v) err = %v, want ErrPermanent", msg, err)
		}
	}
	if got := h.fake.Requests("sendMessage"); got != 0 {
		t.Errorf("%d invalid messages reached Telegram", got)
	}
}

func TestSendFallsBackToPlainText(t *testing.T) {
	h := newHarness(t, nil)
	h.fake.FailWith("sendMessage", telegramtest.Failure{Status: 400,
		Description: `Bad Request: can't parse entities: Unsupported start tag "b" at byte offset 0`})
	md := "**Bold** and [a link](https://x.io) & more"
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "telegram", ChatID: "80"}, Text: md}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := h.fake.Messages(80)
	want := markup.TelegramText(markup.TelegramHTML(md, 4096)[0])
	if len(msgs) != 1 || msgs[0].ParseMode != "" || msgs[0].Text != want || want != "Bold and a link & more" {
		t.Errorf("messages = %+v, want plain %q", msgs, want)
	}
}

func TestEdit(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	to := channels.Address{Platform: "telegram", ChatID: "90"}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "Allow?", Buttons: [][]channels.Button{{{Label: "Yes", Data: "y"}}}})
	if err != nil {
		t.Fatal(err)
	}
	decided := channels.Outbound{Text: "Allowed by **Ann**"}
	if err := h.ch.Edit(ctx, to, id, decided); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	m := h.fake.Messages(90)[0]
	if m.Text != "Allowed by <b>Ann</b>" || m.ParseMode != "HTML" || m.Buttons != nil || m.Edits != 1 {
		t.Errorf("after edit: %+v", m)
	}
	if err := h.ch.Edit(ctx, to, id, decided); err != nil {
		t.Errorf("edit to the same content: %v", err)
	}
	buttons := [][]channels.Button{{{Label: "Undo", Data: "u"}}}
	if err := h.ch.Edit(ctx, to, id, channels.Outbound{Text: strings.Repeat("long text ", 1000), Buttons: buttons}); err != nil {
		t.Fatalf("long edit: %v", err)
	}
	m = h.fake.Messages(90)[0]
	if !strings.HasSuffix(m.Text, "\n…") || utf16Len(m.Text) > 4096 || len(m.Buttons) != 1 {
		t.Errorf("long edit: %d units, buttons %v, ends %q", utf16Len(m.Text), m.Buttons, m.Text[len(m.Text)-10:])
	}
	if err := h.ch.Edit(ctx, to, "12345", decided); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("edit of a missing message: %v, want ErrPermanent", err)
	}
}

func TestTyping(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	if err := h.ch.Typing(ctx, channels.Address{Platform: "telegram", ChatID: "-5", ThreadID: "3"}); err != nil {
		t.Fatal(err)
	}
	got := h.fake.ChatActions(-5)
	if len(got) != 1 || got[0] != (telegramtest.ChatAction{Action: "typing", ThreadID: 3}) {
		t.Errorf("chat actions = %+v", got)
	}
	h.fake.Fail("sendChatAction", 429, 5, 1)
	var ra *channels.RetryAfterError
	if err := h.ch.Typing(ctx, channels.Address{Platform: "telegram", ChatID: "-5"}); !errors.As(err, &ra) || ra.After != 5*time.Second {
		t.Errorf("typing under a rate limit: %v, want RetryAfterError without waiting", err)
	}
}

func TestConcurrentSendsReuseConnections(t *testing.T) {
	h := newHarness(t, nil)
	h.Start(nil)
	h.waitPolling()
	ctx := h.Ctx()
	const parallel, rounds = 20, 3
	before := h.fake.Connections()
	for round := range rounds {
		var wg sync.WaitGroup
		for i := range parallel {
			wg.Go(func() {
				to := channels.Address{Platform: "telegram", ChatID: strconv.Itoa(1000 + i)}
				if _, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "round " + strconv.Itoa(round)}); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	// The first round may open a connection per send; later rounds find
	// them idle. (The long poll holds its own connection.)
	if opened := h.fake.Connections() - before; opened > parallel+1 {
		t.Errorf("%d sends in %d rounds of %d opened %d connections, want at most %d",
			parallel*rounds, rounds, parallel, opened, parallel+1)
	}
}
