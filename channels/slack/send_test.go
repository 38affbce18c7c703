package slack_test

import (
	"errors"
	"html"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

func TestSendLongReplyInThread(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	report, codeLines := channeltest.LongReport("All **green** & <fine>, ping <!channel>.", 150, "fmt.Println(%d, \"a < b && c > d\")")
	to := channels.Address{Platform: "slack", ChatID: "C0GEN", ThreadID: "1700000020.000100"}
	buttons := [][]channels.Button{{{Label: "OK", Data: "ok"}}}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: report, Buttons: buttons, ReplyTo: "1700000020.000100"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := h.fake.Posted("C0GEN", "chat.postMessage")
	if len(msgs) < 4 {
		t.Fatalf("10 000 characters sent as %d messages", len(msgs))
	}
	var visible strings.Builder
	for i, m := range msgs {
		if n := utf16Len(m.Section); n > 3000 || m.Section == "" {
			t.Errorf("part %d section is %d UTF-16 units", i, n)
		}
		if m.Text != m.Section || !m.Verbatim || m.Blocks > 50 {
			t.Errorf("part %d: text %q… verbatim %v blocks %d", i, m.Text[:min(len(m.Text), 30)], m.Verbatim, m.Blocks)
		}
		if m.ThreadTS != to.ThreadID {
			t.Errorf("part %d posted in thread %q, want %q", i, m.ThreadTS, to.ThreadID)
		}
		if n := strings.Count(m.Section, "```"); n%2 != 0 {
			t.Errorf("part %d breaks a code block: %d fences", i, n)
		}
		if (len(m.Buttons) > 0) != (i == len(msgs)-1) {
			t.Errorf("part %d buttons %v", i, m.Buttons)
		}
		visible.WriteString(html.UnescapeString(strings.ReplaceAll(m.Section, "```", "")) + "\n")
	}
	if last := msgs[len(msgs)-1]; id != last.TS {
		t.Errorf("Send returned %s, last message is %s", id, last.TS)
	}
	for _, line := range codeLines {
		if !strings.Contains(visible.String(), line+"\n") {
			t.Fatalf("code line %q missing or cut", line)
		}
	}
	if !strings.Contains(msgs[0].Section, "All *green* &amp; &lt;fine&gt;, ping &lt;!channel&gt;.") {
		t.Errorf("first part does not escape the text: %q", msgs[0].Section[:200])
	}
}

func TestSendButtonsAsActions(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	buttons := [][]channels.Button{
		{{Label: "Allow once", Data: "ap:abcdefghij0123456789:o"}, {Label: "Always allow", Data: "ap:abcdefghij0123456789:a"}},
		{{Label: "Deny", Data: "ap:abcdefghij0123456789:d"}},
	}
	to := channels.Address{Platform: "slack", ChatID: "C0GEN"}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "Run `rm -rf build`?", Buttons: buttons})
	if err != nil {
		t.Fatal(err)
	}
	msgs := h.fake.Posted("C0GEN", "chat.postMessage")
	if len(msgs) != 1 || msgs[0].TS != id || msgs[0].ThreadTS != "" {
		t.Fatalf("messages = %+v", msgs)
	}
	got := msgs[0].Buttons
	if len(got) != 2 || len(got[0]) != 2 || len(got[1]) != 1 {
		t.Fatalf("button rows = %+v", got)
	}
	ids := map[string]bool{}
	for r, row := range buttons {
		for i, b := range row {
			g := got[r][i]
			if g.Label != b.Label || g.Value != b.Data {
				t.Errorf("button %d/%d = %+v, want %+v", r, i, g, b)
			}
			if g.ActionID == "" || ids[g.ActionID] {
				t.Errorf("action id %q empty or repeated", g.ActionID)
			}
			ids[g.ActionID] = true
		}
	}
	for _, bad := range [][][]channels.Button{
		{{{Label: " ", Data: "x"}}},
		{{{Label: "x", Data: ""}}},
		{{{Label: "x", Data: strings.Repeat("d", 2001)}}},
	} {
		if _, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "x", Buttons: bad}); !errors.Is(err, channels.ErrPermanent) {
			t.Errorf("buttons %v: err %v, want ErrPermanent", bad, err)
		}
	}
}

func TestSendWaitsOutRateLimit(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	h.fake.RateLimit("chat.postMessage", 1, 1)
	to := channels.Address{Platform: "slack", ChatID: "C0GEN"}
	if _, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "hello"}); err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := h.fake.Requests("chat.postMessage"); got != 2 {
		t.Errorf("chat.postMessage called %d times, want the 429 and the retry", got)
	}
	if len(h.fake.Posted("C0GEN", "chat.postMessage")) != 1 {
		t.Error("message not delivered after the rate limit")
	}
}

func TestSendReturnsRetryAfterForLongLimits(t *testing.T) {
	h := newHarness(t, func(o *slack.Options) { o.MaxRetryWait = 500 * time.Millisecond })
	ctx := h.Ctx()
	h.fake.RateLimit("chat.postMessage", 30, 1)
	_, err := h.ch.Send(ctx, channels.Outbound{To: channels.Address{Platform: "slack", ChatID: "C0GEN"}, Text: "hello"})
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 30*time.Second {
		t.Fatalf("Send = %v, want RetryAfterError of 30s", err)
	}
	if got := h.fake.Requests("chat.postMessage"); got != 1 {
		t.Errorf("chat.postMessage called %d times, want 1", got)
	}
}

func TestSendClassifiesErrors(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	to := channels.Address{Platform: "slack", ChatID: "C0GEN"}
	for code, hint := range map[string]string{
		"channel_not_found": "invite the bot",
		"not_in_channel":    "/invite",
		"is_archived":       "archived",
		"invalid_auth":      "slack.bot_token",
	} {
		h.fake.Fail("chat.postMessage", code, 1)
		_, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "x"})
		if !errors.Is(err, channels.ErrPermanent) || !strings.Contains(err.Error(), hint) || !strings.Contains(err.Error(), code) {
			t.Errorf("%s: err %v, want ErrPermanent saying %q", code, err, hint)
		}
	}
	h.fake.FailHTTP("chat.postMessage", 500, 1)
	if _, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "x"}); err == nil || errors.Is(err, channels.ErrPermanent) {
		t.Errorf("500: err %v, want a transient error", err)
	}
	for _, msg := range []channels.Outbound{
		{To: to, Text: "  "},
		{To: channels.Address{Platform: "telegram", ChatID: "42"}, Text: "x"},
		{To: channels.Address{Platform: "slack"}, Text: "x"},
	} {
		if _, err := h.ch.Send(ctx, msg); !errors.Is(err, channels.ErrPermanent) {
			t.Errorf("Send(%+v) = %v, want ErrPermanent", msg, err)
		}
	}
}

func TestEditRemovesButtons(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	to := channels.Address{Platform: "slack", ChatID: "C0GEN", ThreadID: "1700000030.000100"}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "Allow `ls`?",
		Buttons: [][]channels.Button{{{Label: "Allow", Data: "a"}, {Label: "Deny", Data: "d"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Edit(ctx, to, id, channels.Outbound{To: to, Text: "✅ **Ann** allowed `ls` once"}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	ups := h.fake.Posted("C0GEN", "chat.update")
	if len(ups) != 1 {
		t.Fatalf("updates = %+v", ups)
	}
	if u := ups[0]; u.TS != id || len(u.Buttons) != 0 || u.NoBlocks || u.Section != "✅ *Ann* allowed `ls` once" {
		t.Errorf("update = %+v", u)
	}
	err = h.ch.Edit(ctx, to, "1.000001", channels.Outbound{To: to, Text: "x"})
	if !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("editing a missing message = %v, want ErrPermanent", err)
	}
	long := strings.Repeat("word ", 1000)
	if err := h.ch.Edit(ctx, to, id, channels.Outbound{To: to, Text: long}); err != nil {
		t.Fatal(err)
	}
	ups = h.fake.Posted("C0GEN", "chat.update")
	if u := ups[len(ups)-1]; utf16Len(u.Section) > 3000 || !strings.HasSuffix(u.Section, "…") {
		t.Errorf("long edit not cut to one part: %d units", utf16Len(u.Section))
	}
}

func TestDirectMessageToUserID(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	to := channels.Address{Platform: "slack", ChatID: "U0ANN"}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to, Text: "Approve **Bo**?",
		Buttons: [][]channels.Button{{{Label: "Approve", Data: "ar:x:a"}}}})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	im := slacktest.IM("U0ANN")
	msgs := h.fake.Posted(im, "chat.postMessage")
	if len(msgs) != 1 || msgs[0].TS != id {
		t.Fatalf("messages in the IM = %+v", msgs)
	}
	if err := h.ch.Edit(ctx, to, id, channels.Outbound{To: to, Text: "Approved"}); err != nil {
		t.Fatalf("Edit through the user id: %v", err)
	}
	if ups := h.fake.Posted(im, "chat.update"); len(ups) != 1 || ups[0].TS != id {
		t.Errorf("updates in the IM = %+v", ups)
	}
	if _, err := h.ch.Send(ctx, channels.Outbound{To: channels.Address{Platform: "slack", ChatID: "W0GRID"}, Text: "hi"}); err != nil {
		t.Fatal(err)
	}
	if n := h.fake.Requests("conversations.open"); n != 2 {
		t.Errorf("conversations.open called %d times, want once per user", n)
	}
	h.fake.Fail("conversations.open", "user_not_found", 1)
	_, err = h.ch.Send(ctx, channels.Outbound{To: channels.Address{Platform: "slack", ChatID: "U0GONE"}, Text: "hi"})
	if !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("DM to an unknown user = %v, want ErrPermanent", err)
	}
}

func TestTypingDoesNothing(t *testing.T) {
	h := newHarness(t, nil)
	if err := h.ch.Typing(h.Ctx(), channels.Address{Platform: "slack", ChatID: "C0GEN"}); err != nil {
		t.Errorf("Typing = %v", err)
	}
	for _, m := range []string{"chat.postMessage", "chat.postEphemeral"} {
		if n := h.fake.Requests(m); n != 0 {
			t.Errorf("Typing called %s %d times", m, n)
		}
	}
}
