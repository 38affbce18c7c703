package discord_test

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/discord"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// liveFence matches a code fence whose first backtick is not escaped.
var liveFence = regexp.MustCompile("(^|[^\\\\])```")

func TestSendLongMarkdownSplitsFenceAware(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := h.Ctx()
	report, codeLines := channeltest.LongReport("All **green**, see https://ci.example.com/run_42.", 200, "fmt.Println(%d, \"a_b * c\")")
	asked := h.fake.SendMessage(channelID, guildID, userID, "Ann", "report?")
	buttons := [][]channels.Button{{{Label: "OK", Data: "ok"}}}
	id, err := h.ch.Send(ctx, channels.Outbound{To: to(channelID), Text: report, Buttons: buttons, ReplyTo: asked})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	msgs := h.fake.Messages(channelID)
	if len(msgs) < 5 {
		t.Fatalf("10 000 characters sent as %d messages", len(msgs))
	}
	var code strings.Builder
	for i, m := range msgs {
		if n := utf8.RuneCountInString(m.Content); n > 2000 {
			t.Errorf("part %d is %d characters", i, n)
		}
		if n := len(liveFence.FindAllString(m.Content, -1)); n%2 != 0 {
			t.Errorf("part %d leaves a code block open (%d fences):\n%s", i, n, m.Content)
		}
		if (m.ReplyTo == asked) != (i == 0) {
			t.Errorf("part %d replies to %q", i, m.ReplyTo)
		}
		if (len(m.Buttons) > 0) != (i == len(msgs)-1) {
			t.Errorf("part %d buttons %v", i, m.Buttons)
		}
		if !m.AllowedMentions.NoneAllowed() || m.AllowedMentions.RepliedUser != (i == 0) {
			t.Errorf("part %d allowed mentions %+v", i, m.AllowedMentions)
		}
		for _, block := range regexp.MustCompile("(?s)```go\n(.*?)\n```").FindAllStringSubmatch(m.Content, -1) {
			code.WriteString(block[1] + "\n")
		}
	}
	if last := msgs[len(msgs)-1]; id != last.ID {
		t.Errorf("Send returned %s, last message is %s", id, last.ID)
	}
	if got := code.String(); got != strings.Join(codeLines, "\n")+"\n" {
		t.Errorf("code split badly; reassembled:\n%s", got)
	}
	if !strings.Contains(msgs[0].Content, "**Build report**") || !strings.Contains(msgs[0].Content, "https://ci.example.com/run_42.") {
		t.Errorf("first part = %q", msgs[0].Content[:200])
	}
}

func TestSendNeutralisesMentions(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	text := "@everyone look: <@" + userID + "> <@&" + otherID + "> @here `@everyone`"
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: text}); err != nil {
		t.Fatal(err)
	}
	m := h.fake.Messages(channelID)[0]
	for _, live := range []string{"@everyone", "@here", "<@"} {
		if strings.Contains(m.Content, live) {
			t.Errorf("content %q still contains %q", m.Content, live)
		}
	}
	if !m.AllowedMentions.NoneAllowed() || m.AllowedMentions.RepliedUser {
		t.Errorf("allowed mentions = %+v, want none", m.AllowedMentions)
	}
	if strings.ReplaceAll(strings.ReplaceAll(m.Content, "\u200d", ""), `\`, "") != text {
		t.Errorf("content %q does not read as the text %q", m.Content, text)
	}
}

func TestSendButtonsAsComponents(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	var row []channels.Button
	for i := range 7 {
		row = append(row, channels.Button{Label: fmt.Sprintf("B%d", i), Data: fmt.Sprintf("d%d", i)})
	}
	long := channels.Button{Label: strings.Repeat("L", 100), Data: strings.Repeat("x", 100)}
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: "pick", Buttons: [][]channels.Button{row, {long}}})
	if err != nil {
		t.Fatal(err)
	}
	got := h.fake.Messages(channelID)[0].Buttons
	if len(got) != 3 || len(got[0]) != 5 || len(got[1]) != 2 || len(got[2]) != 1 {
		t.Fatalf("rows = %+v, want 5, 2 and 1 buttons", got)
	}
	if got[1][1].CustomID != "d6" || got[1][1].Label != "B6" || got[0][0].Style != 1 {
		t.Errorf("button = %+v", got[1][1])
	}
	if b := got[2][0]; b.CustomID != long.Data || utf8.RuneCountInString(b.Label) != 80 || !strings.HasSuffix(b.Label, "…") {
		t.Errorf("long button = %+v", b)
	}
}

func TestSendRejectsBadInput(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := h.Ctx()
	ok := to(channelID)
	six := make([][]channels.Button, 6)
	for i := range six {
		six[i] = []channels.Button{{Label: "b", Data: fmt.Sprint(i)}}
	}
	tests := []channels.Outbound{
		{To: ok, Text: "  "},
		{To: to("general"), Text: "hi"},
		{To: channels.Address{Platform: "slack", ChatID: channelID}, Text: "hi"},
		{To: ok, Text: "hi", ReplyTo: "abc"},
		{To: ok, Text: "hi", Buttons: [][]channels.Button{{{Label: "A", Data: strings.Repeat("d", 101)}}}},
		{To: ok, Text: "hi", Buttons: [][]channels.Button{{{Label: " ", Data: "d"}}}},
		{To: ok, Text: "hi", Buttons: [][]channels.Button{{{Label: "A", Data: "d"}, {Label: "B", Data: "d"}}}},
		{To: ok, Text: "hi", Buttons: six},
	}
	for _, msg := range tests {
		if _, err := h.ch.Send(ctx, msg); !errors.Is(err, channels.ErrPermanent) {
			t.Errorf("Send(%+v) err = %v, want ErrPermanent", msg, err)
		}
	}
	if got := h.fake.Requests(discordtest.RouteSend); got != 0 {
		t.Errorf("%d invalid messages reached Discord", got)
	}
}

func TestSendToThreadUsesThreadChannel(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	const thread = "300000000000000009"
	h.fake.AddChannel(thread, guildID)
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: channels.Address{Platform: "discord", ChatID: channelID, ThreadID: thread}, Text: "in thread"})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Messages(thread); len(got) != 1 || got[0].Content != "in thread" {
		t.Errorf("thread messages = %+v", got)
	}
}

func TestEditRemovesButtons(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := h.Ctx()
	h.fake.AddChannel(channelID, guildID)
	id, err := h.ch.Send(ctx, channels.Outbound{To: to(channelID), Text: "Allow?", Buttons: [][]channels.Button{{{Label: "Yes", Data: "y"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Edit(ctx, to(channelID), id, channels.Outbound{Text: "Allowed by **Ann** @here"}); err != nil {
		t.Fatalf("Edit: %v", err)
	}
	m := h.fake.Messages(channelID)[0]
	if m.Content != "Allowed by **Ann** @\u200dhere" || m.Buttons != nil || m.Edits != 1 || !m.AllowedMentions.NoneAllowed() {
		t.Errorf("after edit: %+v", m)
	}
	buttons := [][]channels.Button{{{Label: "Undo", Data: "u"}}}
	if err := h.ch.Edit(ctx, to(channelID), id, channels.Outbound{Text: strings.Repeat("long text ", 500), Buttons: buttons}); err != nil {
		t.Fatalf("long edit: %v", err)
	}
	m = h.fake.Messages(channelID)[0]
	if !strings.HasSuffix(m.Content, "\n…") || utf8.RuneCountInString(m.Content) > 2000 || len(m.Buttons) != 1 {
		t.Errorf("long edit: %d characters, buttons %v", utf8.RuneCountInString(m.Content), m.Buttons)
	}
	if err := h.ch.Edit(ctx, to(channelID), "123456789", channels.Outbound{Text: "x"}); !errors.Is(err, channels.ErrPermanent) {
		t.Errorf("edit of a missing message: %v, want ErrPermanent", err)
	}
}

func TestSendWaitsOutShortRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	h.fake.Fail(discordtest.RouteSend, 429, 50*time.Millisecond, 1)
	id, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: "after the limit"})
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	if got := h.fake.Requests(discordtest.RouteSend); got != 2 {
		t.Errorf("send called %d times, want 2", got)
	}
	if msgs := h.fake.Messages(channelID); len(msgs) != 1 || msgs[0].ID != id {
		t.Errorf("messages = %+v, id %s", msgs, id)
	}
}

func TestSendLongRateLimitReturnsRetryAfter(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	h.fake.Fail(discordtest.RouteSend, 429, 120*time.Second, 1)
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: "x"})
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 120*time.Second {
		t.Fatalf("err = %v, want RetryAfterError of 2m", err)
	}
	if errors.Is(err, channels.ErrPermanent) {
		t.Error("rate limit marked permanent")
	}

	h2 := newHarness(t, func(o *discord.Options) { o.MaxRetries = 1 })
	h2.fake.AddChannel(channelID, guildID)
	h2.fake.Fail(discordtest.RouteSend, 429, 20*time.Millisecond, 5)
	_, err = h2.ch.Send(h2.Ctx(), channels.Outbound{To: to(channelID), Text: "x"})
	if !errors.As(err, &ra) || ra.After != 20*time.Millisecond {
		t.Fatalf("err = %v, want RetryAfterError of 20ms after the retries", err)
	}
	if got := h2.fake.Requests(discordtest.RouteSend); got != 2 {
		t.Errorf("send called %d times with MaxRetries 1, want 2", got)
	}
}

func TestSendErrorClasses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		failure   discordtest.Failure
		permanent bool
		hint      string
	}{
		{"missing access", discordtest.Failure{Status: 403}, true, "View Channel"},
		{"missing permissions", discordtest.Failure{Status: 403, Code: 50013, Message: "Missing Permissions"}, true, "Send Messages"},
		{"malformed", discordtest.Failure{Status: 400}, true, "malformed"},
		{"server error", discordtest.Failure{Status: 500}, false, ""},
		{"bad gateway after retries", discordtest.Failure{Status: 502, Times: 10}, false, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.fake.AddChannel(channelID, guildID)
			h.fake.FailWith(discordtest.RouteSend, tt.failure)
			_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: "x"})
			if err == nil {
				t.Fatal("Send succeeded")
			}
			if errors.Is(err, channels.ErrPermanent) != tt.permanent {
				t.Errorf("err = %v, permanent = %v, want %v", err, !tt.permanent, tt.permanent)
			}
			if !strings.Contains(err.Error(), tt.hint) {
				t.Errorf("err = %v, want a hint containing %q", err, tt.hint)
			}
			if strings.Contains(err.Error(), token) {
				t.Errorf("error leaks the token: %v", err)
			}
		})
	}
}

func TestSendWithRejectedToken(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.SetToken("another-token")
	h.fake.AddChannel(channelID, guildID)
	_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(channelID), Text: "x"})
	if !errors.Is(err, channels.ErrPermanent) || !strings.Contains(err.Error(), "discord.token") {
		t.Errorf("err = %v, want ErrPermanent naming discord.token", err)
	}
}

func TestSendToUserOpensDirectMessages(t *testing.T) {
	t.Parallel()
	t.Run("user seen in a guild", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		h.startReady()
		h.fake.SendMessage(channelID, guildID, userID, "Ann", "hi")
		h.Next()
		if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(userID), Text: "approve?"}); err != nil {
			t.Fatal(err)
		}
		dm := h.fake.DMChannel(userID)
		if dm == "" || len(h.fake.Messages(dm)) != 1 {
			t.Fatalf("DM channel %q, messages %+v", dm, h.fake.Messages(dm))
		}
		if got := h.fake.Requests(discordtest.RouteSend); got != 1 {
			t.Errorf("%d sends, want 1: a seen user's DM opens before sending", got)
		}
	})
	t.Run("user not seen", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		ctx := h.Ctx()
		h.fake.AddUser(userID, "Ann")
		id, err := h.ch.Send(ctx, channels.Outbound{To: to(userID), Text: "approve?", Buttons: [][]channels.Button{{{Label: "Yes", Data: "y"}}}})
		if err != nil {
			t.Fatal(err)
		}
		dm := h.fake.DMChannel(userID)
		if msgs := h.fake.Messages(dm); dm == "" || len(msgs) != 1 || msgs[0].ID != id {
			t.Fatalf("DM channel %q, messages %+v", dm, msgs)
		}
		if s, d := h.fake.Requests(discordtest.RouteSend), h.fake.Requests(discordtest.RouteDM); s != 2 || d != 1 {
			t.Errorf("%d sends and %d DM opens, want 2 (Unknown Channel, then the DM) and 1", s, d)
		}
		// Edit and Typing use the same mapping.
		if err := h.ch.Edit(ctx, to(userID), id, channels.Outbound{Text: "decided"}); err != nil {
			t.Fatalf("Edit: %v", err)
		}
		if err := h.ch.Typing(ctx, to(userID)); err != nil {
			t.Fatalf("Typing: %v", err)
		}
		if m := h.fake.Messages(dm)[0]; m.Content != "decided" || m.Buttons != nil || h.fake.Typing(dm) != 1 {
			t.Errorf("after edit %+v, typing %d", m, h.fake.Typing(dm))
		}
		if d := h.fake.Requests(discordtest.RouteDM); d != 1 {
			t.Errorf("%d DM opens, want the cached channel reused", d)
		}

		// A restarted process knows nothing, and finds the DM again.
		fresh := newHarnessOn(t, h.fake, nil)
		if err := fresh.ch.Edit(ctx, to(userID), id, channels.Outbound{Text: "decided again"}); err != nil {
			t.Fatalf("Edit after restart: %v", err)
		}
		if m := h.fake.Messages(dm)[0]; m.Content != "decided again" {
			t.Errorf("after restart edit: %+v", m)
		}
	})
	t.Run("neither channel nor user", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t, nil)
		_, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to("999999999999999999"), Text: "x"})
		if !errors.Is(err, channels.ErrPermanent) || !strings.Contains(err.Error(), "check the address") {
			t.Errorf("err = %v, want ErrPermanent asking to check the address", err)
		}
	})
}

func TestTyping(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := h.Ctx()
	h.fake.AddChannel(channelID, guildID)
	if err := h.ch.Typing(ctx, to(channelID)); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Typing(channelID); got != 1 {
		t.Errorf("typing = %d", got)
	}
	h.fake.Fail(discordtest.RouteTyping, 429, 5*time.Second, 1)
	var ra *channels.RetryAfterError
	if err := h.ch.Typing(ctx, to(channelID)); !errors.As(err, &ra) || ra.After != 5*time.Second {
		t.Errorf("typing under a rate limit: %v, want RetryAfterError without waiting", err)
	}
}
