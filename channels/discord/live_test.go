package discord_test

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

// refID is a channel where tests Send a text, to see how it renders.
const refID = "300000000000000009"

// rendered returns the contents of the messages Send makes of text.
func (h *harness) rendered(text string) []string {
	h.t.Helper()
	h.fake.AddChannel(refID, guildID)
	before := len(h.fake.Messages(refID))
	if _, err := h.ch.Send(h.Ctx(), channels.Outbound{To: to(refID), Text: text}); err != nil {
		h.t.Fatalf("Send for reference: %v", err)
	}
	var out []string
	for _, m := range h.fake.Messages(refID)[before:] {
		out = append(out, m.Content)
	}
	return out
}

// contents returns the contents of the bot's messages in channelID.
func contents(msgs []discordtest.Message) []string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Content)
	}
	return out
}

// longAnswer is Markdown Send splits into three messages.
var longAnswer = strings.Repeat("Some **bold** words and `code`, then more words. ", 90)

// TestLiveStreamThenFinish: a live answer is a reply posted with the first
// words and edited as it grows; FinishLive makes it the final text, once.
func TestLiveStreamThenFinish(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	ctx := h.Ctx()
	asked := h.fake.SendMessage(channelID, guildID, userID, "Ann", "hello?")
	id, err := h.ch.BeginLive(ctx, to(channelID), asked, "", "Hel")
	if err != nil {
		t.Fatalf("BeginLive: %v", err)
	}
	for _, text := range []string{"Hello wor", "Hello **world"} {
		if err := h.ch.UpdateLive(ctx, to(channelID), id, text); err != nil {
			t.Fatalf("UpdateLive(%q): %v", text, err)
		}
	}
	m, ok := h.fake.Message(id)
	if !ok || m.ReplyTo != asked || !m.AllowedMentions.NoneAllowed() {
		t.Fatalf("live message = %+v (exists %v), want a reply to %s mentioning nobody", m, ok, asked)
	}
	if len(m.History) != 2 || !strings.HasPrefix(m.History[1].Content, "Hello ") || m.History[1].Content != m.Content ||
		m.History[1].At.Before(m.History[0].At) || m.History[0].At.Before(m.Created) {
		t.Fatalf("edits = %+v, content %q; want two, in time order, the last shown", m.History, m.Content)
	}

	final := "Hello **world**, and `more`!"
	last, err := h.ch.FinishLive(ctx, channels.Outbound{To: to(channelID), Text: final, ReplyTo: asked, Key: "sb-live1", Replaces: []string{id}})
	if err != nil {
		t.Fatalf("FinishLive: %v", err)
	}
	if last != id {
		t.Errorf("FinishLive returned %s, want the live message %s", last, id)
	}
	got := contents(h.fake.Messages(channelID))
	if want := h.rendered(final); !slices.Equal(got, want) {
		t.Errorf("channel shows %q, want exactly the final text %q", got, want)
	}
}

// TestLiveFinishLongContinuesInNewMessages: a final text longer than the
// live messages goes on in new messages, in order; a shorter one deletes
// the live messages it does not need.
func TestLiveFinishLongContinuesInNewMessages(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	ctx := h.Ctx()
	want := h.rendered(longAnswer)
	if len(want) != 3 {
		t.Fatalf("the long answer renders as %d messages, the test wants 3", len(want))
	}
	id, err := h.ch.BeginLive(ctx, to(channelID), "", "", "Some")
	if err != nil {
		t.Fatal(err)
	}
	last, err := h.ch.FinishLive(ctx, channels.Outbound{To: to(channelID), Text: longAnswer, Key: "sb-long", Replaces: []string{id}})
	if err != nil {
		t.Fatalf("FinishLive: %v", err)
	}
	msgs := h.fake.Messages(channelID)
	if got := contents(msgs); !slices.Equal(got, want) || msgs[0].ID != id || last != msgs[2].ID {
		t.Fatalf("channel shows %d messages (first %s, last returned %s), want the live one %s then two more", len(msgs), msgs[0].ID, last, id)
	}

	const other = "300000000000000004"
	h.fake.AddChannel(other, guildID)
	var live []string
	for _, text := range []string{"one", "two", "three"} {
		id, err := h.ch.BeginLive(ctx, to(other), "", "", text)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, id)
	}
	last, err = h.ch.FinishLive(ctx, channels.Outbound{To: to(other), Text: "short in the end", Replaces: live})
	if err != nil {
		t.Fatalf("FinishLive shorter: %v", err)
	}
	msgs = h.fake.Messages(other)
	if len(msgs) != 1 || msgs[0].ID != live[0] || last != live[0] || msgs[0].Content != h.rendered("short in the end")[0] {
		t.Fatalf("channel shows %q, want only the first live message with the final text", contents(msgs))
	}
	if gone := h.fake.Deleted(other); len(gone) != 2 || gone[0].ID != live[1] || gone[1].ID != live[2] {
		t.Errorf("deleted %+v, want the two left-over live messages", gone)
	}
}

// TestLiveFinishTwiceDoublesNothing: FinishLive repeated (the dispatcher
// retrying after a crash) edits and finds the same messages again.
func TestLiveFinishTwiceDoublesNothing(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	ctx := h.Ctx()
	want := h.rendered(longAnswer)
	var live []string
	for _, text := range []string{"Some", "words", "more"} {
		id, err := h.ch.BeginLive(ctx, to(channelID), "", "", text)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, id)
	}
	// The middle live message is gone (deleted by a moderator, say): its
	// part and those after it are sent anew, keeping the order.
	if err := h.ch.Delete(ctx, to(channelID), live[1]); err != nil {
		t.Fatal(err)
	}
	msg := channels.Outbound{To: to(channelID), Text: longAnswer, Key: "sb-twice", Replaces: live}
	first, err := h.ch.FinishLive(ctx, msg)
	if err != nil {
		t.Fatalf("FinishLive: %v", err)
	}
	again, err := h.ch.FinishLive(ctx, msg)
	if err != nil {
		t.Fatalf("FinishLive again: %v", err)
	}
	msgs := h.fake.Messages(channelID)
	if got := contents(msgs); !slices.Equal(got, want) || first != again || msgs[0].ID != live[0] {
		t.Fatalf("after two FinishLive: %d messages, last ids %s and %s; want the final text once, from the first live message", len(msgs), first, again)
	}
	if _, ok := h.fake.Message(live[2]); ok {
		t.Error("the live message after the gone one is still there, out of order")
	}
}

// TestLiveRateLimitReturnsAtOnce: a live answer does not wait out a 429,
// nor a bucket Discord said is used up; FinishLive waits out a short 429
// as Send does.
func TestLiveRateLimitReturnsAtOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	ctx := h.Ctx()
	h.fake.Fail(discordtest.RouteSend, 429, 30*time.Second, 1)
	start := time.Now()
	_, err := h.ch.BeginLive(ctx, to(channelID), "", "", "first words")
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) || ra.After != 30*time.Second || time.Since(start) > 5*time.Second {
		t.Fatalf("BeginLive under a 429 = %v after %v, want a RetryAfterError of 30s at once", err, time.Since(start))
	}
	id, err := h.ch.BeginLive(ctx, to(channelID), "", "", "first words")
	if err != nil {
		t.Fatal(err)
	}

	h.fake.Fail(discordtest.RouteEdit, 429, 30*time.Second, 1)
	start = time.Now()
	err = h.ch.UpdateLive(ctx, to(channelID), id, "first words and")
	if !errors.As(err, &ra) || ra.After != 30*time.Second || time.Since(start) > 5*time.Second {
		t.Fatalf("UpdateLive under a 429 = %v after %v, want a RetryAfterError of 30s at once", err, time.Since(start))
	}
	if n := h.fake.Requests(discordtest.RouteEdit); n != 1 {
		t.Errorf("UpdateLive made %d edit requests, want 1 (no retry)", n)
	}

	h.fake.UseUp(discordtest.RouteEdit, 30*time.Second)
	if err := h.ch.UpdateLive(ctx, to(channelID), id, "first words and more"); err != nil {
		t.Fatalf("UpdateLive using up the bucket: %v", err)
	}
	start = time.Now()
	err = h.ch.UpdateLive(ctx, to(channelID), id, "first words and more still")
	if !errors.As(err, &ra) || ra.After < 20*time.Second || time.Since(start) > 5*time.Second {
		t.Fatalf("UpdateLive on a used-up bucket = %v after %v, want a RetryAfterError of about 30s at once", err, time.Since(start))
	}
	if n := h.fake.Requests(discordtest.RouteEdit); n != 2 {
		t.Errorf("%d edit requests, want 2: the used-up bucket's update is not sent", n)
	}
	if m, _ := h.fake.Message(id); !strings.HasSuffix(m.Content, "and more") {
		t.Errorf("live message shows %q", m.Content)
	}
}

// TestLiveFinishWaitsOutShortRateLimit: FinishLive follows Send's rules.
func TestLiveFinishWaitsOutShortRateLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	ctx := h.Ctx()
	id, err := h.ch.BeginLive(ctx, to(channelID), "", "", "Done")
	if err != nil {
		t.Fatal(err)
	}
	h.fake.Fail(discordtest.RouteEdit, 429, 50*time.Millisecond, 1)
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: to(channelID), Text: "Done now.", Replaces: []string{id}}); err != nil {
		t.Fatalf("FinishLive after a short 429: %v", err)
	}
	if m, _ := h.fake.Message(id); m.Content != h.rendered("Done now.")[0] || h.fake.Requests(discordtest.RouteEdit) != 2 {
		t.Errorf("live message shows %q after %d edits", m.Content, h.fake.Requests(discordtest.RouteEdit))
	}
}

// TestLivePartialMarkdownNeverFails: an answer cut anywhere (an open
// emphasis, a half link, a half mention, nothing visible yet) shows.
func TestLivePartialMarkdownNeverFails(t *testing.T) {
	t.Parallel()
	h := newHarness(t, nil)
	h.fake.AddChannel(channelID, guildID)
	ctx := h.Ctx()
	id, err := h.ch.BeginLive(ctx, to(channelID), "", "", "**")
	if err != nil {
		t.Fatalf("BeginLive(%q): %v", "**", err)
	}
	for _, text := range []string{"", " ", "**bo", "see [the docs](https://exa", "ask <@" + userID, "_x", "```go\nfmt.Println(\n```", "@every"} {
		if err := h.ch.UpdateLive(ctx, to(channelID), id, text); err != nil {
			t.Errorf("UpdateLive(%q): %v", text, err)
		}
		if m, _ := h.fake.Message(id); strings.TrimSpace(m.Content) == "" || strings.Contains(m.Content, "<@") {
			t.Errorf("UpdateLive(%q) shows %q", text, m.Content)
		}
	}
	// LiveLimit runes of prose, a few characters escaped, fit one message
	// whole.
	unit := "Some snake_case and **bold** words, then more words. "
	text := strings.Repeat(unit, h.ch.LiveLimit()/len(unit))
	if err := h.ch.UpdateLive(ctx, to(channelID), id, text); err != nil {
		t.Fatal(err)
	}
	if m, _ := h.fake.Message(id); strings.HasSuffix(m.Content, "…") {
		t.Errorf("a text of LiveLimit runes was cut: %d characters shown", len(m.Content))
	}
}
