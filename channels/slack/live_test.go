package slack_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/markup"
	"github.com/switchboard-chat/switchboard/channels/slack"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
)

// dmThread is a thread in Ann's direct messages: streams there name no
// recipient.
var dmThread = channels.Address{Platform: "slack", ChatID: "D0ANN", ThreadID: "1700000200.000100"}

// rendered is what Send shows of md, part by part.
func rendered(md string) []string { return markup.SlackMrkdwn(md, 3000) }

// askInChannel has Ann write in listened-to channel C0GEN and returns the
// message as the channel delivered it.
func askInChannel(t *testing.T) (*harness, channels.Inbound) {
	t.Helper()
	h := newHarness(t, func(o *slack.Options) { o.Channels = []string{"C0GEN"} })
	h.startSocket()
	if _, err := h.fake.SendEvent("EvASK", slacktest.Msg{Channel: "C0GEN", User: "U0ANN", Text: "explain", TS: "1700000100.000100"}.Event()); err != nil {
		t.Fatal(err)
	}
	return h, h.Next()
}

func TestLiveStreamsInThreadAndFinishesOnce(t *testing.T) {
	h, in := askInChannel(t)
	ctx := h.Ctx()
	to := in.Address()
	id, err := h.ch.BeginLive(ctx, to, in.MessageID, "", "Hello")
	if err != nil {
		t.Fatalf("BeginLive: %v", err)
	}
	starts := h.fake.Posted("C0GEN", "chat.startStream")
	if len(starts) != 1 || starts[0].TS != id || starts[0].ThreadTS != in.ThreadID ||
		starts[0].RecipientUser != "U0ANN" || starts[0].RecipientTeam != slacktest.TeamID || starts[0].MarkdownText != "Hello" {
		t.Fatalf("startStream calls = %+v, want one in thread %s for U0ANN", starts, in.ThreadID)
	}
	steps := []string{
		"Hello, world",
		"Hello, world\n\n```go\nx := 1\n```",         // the daemon closed the open fence
		"Hello, world\n\n```go\nx := 1\ny := 2\n```", // and the block goes on
		"Hello, world\n\n```go\nx := 1\ny := 2\n```\nDone <!channel>.",
	}
	for _, text := range steps {
		if err := h.ch.UpdateLive(ctx, to, id, text); err != nil {
			t.Fatalf("UpdateLive(%q): %v", text, err)
		}
	}
	if n := h.fake.Requests("chat.update") + h.fake.Requests("chat.stopStream"); n != 0 {
		t.Errorf("%d edits or stops while the answer only grew", n)
	}
	shown, _ := h.fake.Shown("C0GEN", id)
	if want := "Hello, world\n\n```go\nx := 1\ny := 2\n```\nDone <\u200b!channel>."; shown != want {
		t.Errorf("stream shows %q, want %q", shown, want)
	}
	final := steps[len(steps)-1]
	last, err := h.ch.FinishLive(ctx, channels.Outbound{To: to, Text: final, Replaces: []string{id}})
	if err != nil || last != id {
		t.Fatalf("FinishLive = %q, %v; want %q", last, err, id)
	}
	if got := h.fake.Visible("C0GEN"); !slices.Equal(got, rendered(final)) {
		t.Errorf("the channel shows %q, want %q", got, rendered(final))
	}
	if h.fake.Streaming("C0GEN", id) || h.fake.Requests("chat.stopStream") != 1 {
		t.Errorf("stream not stopped once (stops %d)", h.fake.Requests("chat.stopStream"))
	}
}

func TestLiveInChannelPostsWhenWhoAskedIsUnknown(t *testing.T) {
	h := newHarness(t, nil)
	to := channels.Address{Platform: "slack", ChatID: "C0OTHER", ThreadID: "1700000300.000100"}
	id, err := h.ch.BeginLive(h.Ctx(), to, "1700000300.000100", "", "Working on it")
	if err != nil {
		t.Fatal(err)
	}
	if n := h.fake.Requests("chat.startStream"); n != 0 {
		t.Errorf("%d streams started with no recipient to name", n)
	}
	if got, _ := h.fake.Shown("C0OTHER", id); got != rendered("Working on it")[0] {
		t.Errorf("posted %q", got)
	}
}

func TestLiveInChannelStreamsForTheAskerAnotherReplicaHeard(t *testing.T) {
	h := newHarness(t, nil)
	h.startSocket() // as a running daemon: it knows its workspace's team
	to := channels.Address{Platform: "slack", ChatID: "C0OTHER", ThreadID: "1700000300.000100"}
	id, err := h.ch.BeginLive(h.Ctx(), to, "1700000300.000100", "U0ASKER", "Working on it")
	if err != nil {
		t.Fatal(err)
	}
	starts := h.fake.Posted("C0OTHER", "chat.startStream")
	if len(starts) != 1 || starts[0].TS != id || starts[0].RecipientUser != "U0ASKER" || starts[0].RecipientTeam != slacktest.TeamID {
		t.Fatalf("streams started = %+v, want one for U0ASKER in the workspace's team", starts)
	}
}

func TestLiveWithoutStreamingPostsAndEdits(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	h.fake.DisableStreaming()
	id, err := h.ch.BeginLive(ctx, dmThread, "", "", "Looking **into** it")
	if err != nil {
		t.Fatalf("BeginLive: %v", err)
	}
	posts := h.fake.Posted("D0ANN", "chat.postMessage")
	if len(posts) != 1 || posts[0].TS != id || posts[0].ThreadTS != dmThread.ThreadID || posts[0].Section != "Looking *into* it" {
		t.Fatalf("posts = %+v", posts)
	}
	if err := h.ch.UpdateLive(ctx, dmThread, id, "Looking **into** it: found"); err != nil {
		t.Fatalf("UpdateLive: %v", err)
	}
	if got, _ := h.fake.Shown("D0ANN", id); got != "Looking *into* it: found" {
		t.Errorf("after the update the message shows %q", got)
	}
	second, err := h.ch.BeginLive(ctx, dmThread, "", "", "Next answer")
	if err != nil {
		t.Fatal(err)
	}
	if n := h.fake.Requests("chat.startStream"); n != 1 {
		t.Errorf("chat.startStream asked %d times, want once: the refusal is remembered", n)
	}
	final := "Looking **into** it: found the cause."
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: dmThread, Text: final, Replaces: []string{id}}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: dmThread, Text: "Next answer, done", Replaces: []string{second}}); err != nil {
		t.Fatal(err)
	}
	want := append(rendered(final), rendered("Next answer, done")...)
	if got := h.fake.Visible("D0ANN"); !slices.Equal(got, want) {
		t.Errorf("the conversation shows %q, want %q", got, want)
	}
}

func TestLiveRestartedTextSwitchesToEdits(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	id, err := h.ch.BeginLive(ctx, dmThread, "", "", "First try")
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"First try goes on", "Second", "Second try, longer"} {
		if err := h.ch.UpdateLive(ctx, dmThread, id, text); err != nil {
			t.Fatalf("UpdateLive(%q): %v", text, err)
		}
	}
	if n := h.fake.Requests("chat.appendStream"); n != 1 {
		t.Errorf("%d appends, want 1 (before the model started again)", n)
	}
	if h.fake.Streaming("D0ANN", id) || h.fake.Requests("chat.update") != 2 {
		t.Errorf("after the restart: streaming %v, %d edits; want a stopped stream, edited twice",
			h.fake.Streaming("D0ANN", id), h.fake.Requests("chat.update"))
	}
	if got, _ := h.fake.Shown("D0ANN", id); got != "Second try, longer" {
		t.Errorf("the message shows %q", got)
	}
	final := "Second try, longer and *final*."
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: dmThread, Text: final, Replaces: []string{id}}); err != nil {
		t.Fatal(err)
	}
	if got := h.fake.Visible("D0ANN"); !slices.Equal(got, rendered(final)) {
		t.Errorf("shows %q, want %q", got, rendered(final))
	}
}

func TestLiveFinishLongContinuesAndShortDeletesLeftOvers(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	begin := func(n int) []string {
		var ids []string
		for i := range n {
			id, err := h.ch.BeginLive(ctx, dmThread, "", "", fmt.Sprintf("part %d so far", i))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		return ids
	}
	long, _ := channeltest.LongReport("A long answer.", 150, "line %d of the listing")
	ids := begin(2)
	buttons := [][]channels.Button{{{Label: "OK", Data: "ok"}}}
	last, err := h.ch.FinishLive(ctx, channels.Outbound{To: dmThread, Text: long, Buttons: buttons, Replaces: ids})
	if err != nil {
		t.Fatal(err)
	}
	want := rendered(long)
	if len(want) < 4 {
		t.Fatalf("the long answer renders as %d parts", len(want))
	}
	tss := h.fake.VisibleTS("D0ANN")
	if got := h.fake.Visible("D0ANN"); !slices.Equal(got, want) || !slices.Equal(tss[:2], ids) || last != tss[len(tss)-1] {
		t.Fatalf("shows %d messages %v (last %s), want %d, the first the live ones %v", len(got), tss, last, len(want), ids)
	}
	posts := h.fake.Posted("D0ANN", "chat.postMessage")
	if p := posts[len(posts)-1]; p.ThreadTS != dmThread.ThreadID || len(p.Buttons) != 1 {
		t.Errorf("last part: thread %q buttons %v", p.ThreadTS, p.Buttons)
	}

	ids = begin(3)
	before := len(h.fake.Visible("D0ANN"))
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: dmThread, Text: "Short after all.", Replaces: ids}); err != nil {
		t.Fatal(err)
	}
	got := h.fake.Visible("D0ANN")
	if len(got) != before-2 || got[len(got)-1] != "Short after all." {
		t.Errorf("after a short final: %d messages (want %d), last %q", len(got), before-2, got[len(got)-1])
	}
	for _, id := range ids[1:] {
		if _, ok := h.fake.Shown("D0ANN", id); ok {
			t.Errorf("left-over live message %s not deleted", id)
		}
	}
}

func TestLiveFinishAgainDoublesNothing(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	long, _ := channeltest.LongReport("Twice.", 150, "row %d")
	want := rendered(long)

	id, err := h.ch.BeginLive(ctx, dmThread, "", "", "Twice")
	if err != nil {
		t.Fatal(err)
	}
	h.fake.Fail("chat.postMessage", "internal_error", 1) // the first part beyond the live message
	msg := channels.Outbound{To: dmThread, Text: long, Replaces: []string{id}}
	if _, err := h.ch.FinishLive(ctx, msg); err == nil {
		t.Fatal("FinishLive succeeded although a post failed")
	}
	for range 2 {
		if _, err := h.ch.FinishLive(ctx, msg); err != nil {
			t.Fatalf("FinishLive again: %v", err)
		}
		if got := h.fake.Visible("D0ANN"); !slices.Equal(got, want) {
			t.Fatalf("shows %d messages, want %d", len(got), len(want))
		}
	}

	// A live message deleted meanwhile gets its part posted anew.
	gone, err := h.ch.BeginLive(ctx, dmThread, "", "", "Soon gone")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Delete(ctx, dmThread, gone); err != nil {
		t.Fatal(err)
	}
	last, err := h.ch.FinishLive(ctx, channels.Outbound{To: dmThread, Text: "Still here.", Replaces: []string{gone}})
	if err != nil || last == gone {
		t.Fatalf("FinishLive of a gone message = %q, %v", last, err)
	}
	if got, _ := h.fake.Shown("D0ANN", last); got != "Still here." {
		t.Errorf("posted anew: %q", got)
	}
}

func TestLiveRateLimitReturnsAtOnce(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	var ra *channels.RetryAfterError

	h.fake.RateLimit("chat.startStream", 30, 1)
	start := time.Now()
	if _, err := h.ch.BeginLive(ctx, dmThread, "", "", "Hi"); !errors.As(err, &ra) || ra.After != 30*time.Second {
		t.Fatalf("BeginLive under a 429 = %v, want a RetryAfterError of 30s", err)
	}
	id, err := h.ch.BeginLive(ctx, dmThread, "", "", "Hi")
	if err != nil {
		t.Fatal(err)
	}
	h.fake.RateLimit("chat.appendStream", 20, 1)
	if err := h.ch.UpdateLive(ctx, dmThread, id, "Hi there"); !errors.As(err, &ra) || ra.After != 20*time.Second {
		t.Fatalf("UpdateLive under a 429 = %v, want a RetryAfterError of 20s", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("live calls under 429 took %s: they waited", d)
	}
	if err := h.ch.UpdateLive(ctx, dmThread, id, "Hi there"); err != nil {
		t.Fatalf("UpdateLive after the wait: %v", err)
	}
	if got, _ := h.fake.Shown("D0ANN", id); got != "Hi there" {
		t.Errorf("shows %q after the retried update", got)
	}

	h.fake.RateLimit("chat.update", 1, 1) // FinishLive waits a short limit out, as Send does
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: dmThread, Text: "Hi there, done", Replaces: []string{id}}); err != nil {
		t.Fatalf("FinishLive under a short 429: %v", err)
	}
	if got, _ := h.fake.Shown("D0ANN", id); got != "Hi there, done" {
		t.Errorf("final shows %q", got)
	}
}

func TestLivePartialMarkdownNeverFails(t *testing.T) {
	for _, streaming := range []bool{true, false} {
		t.Run(fmt.Sprintf("streaming=%v", streaming), func(t *testing.T) {
			h := newHarness(t, nil)
			ctx := h.Ctx()
			if !streaming {
				h.fake.DisableStreaming()
			}
			steps := []string{"```go\nfunc main() {", "```go\nfunc main() {\n\tfmt.Println(\"**hi", "```go\nfunc main() {\n\tfmt.Println(\"**hi\")\n}\n```\nAnd _then"}
			id, err := h.ch.BeginLive(ctx, dmThread, "", "", steps[0])
			if err != nil {
				t.Fatalf("BeginLive: %v", err)
			}
			for _, s := range steps[1:] {
				if err := h.ch.UpdateLive(ctx, dmThread, id, s); err != nil {
					t.Fatalf("UpdateLive(%q): %v", s, err)
				}
			}
			final := steps[len(steps)-1] + " [a link](https://example.com"
			if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: dmThread, Text: final, Replaces: []string{id}}); err != nil {
				t.Fatal(err)
			}
			if got := h.fake.Visible("D0ANN"); !slices.Equal(got, rendered(final)) || strings.Count(got[0], "```")%2 != 0 {
				t.Errorf("shows %q, want %q", got, rendered(final))
			}
		})
	}
}

func TestLiveRateLimitWithoutStreamingReturnsAtOnce(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	h.fake.DisableStreaming()
	var ra *channels.RetryAfterError
	start := time.Now()
	h.fake.RateLimit("conversations.open", 40, 1)
	if _, err := h.ch.BeginLive(ctx, channels.Address{Platform: "slack", ChatID: "U0ANN"}, "", "", "Hi"); !errors.As(err, &ra) || ra.After != 40*time.Second {
		t.Fatalf("BeginLive to a user under a 429 = %v", err)
	}
	h.fake.RateLimit("chat.postMessage", 30, 1)
	if _, err := h.ch.BeginLive(ctx, dmThread, "", "", "Hi"); !errors.As(err, &ra) || ra.After != 30*time.Second {
		t.Fatalf("BeginLive under a 429 = %v", err)
	}
	id, err := h.ch.BeginLive(ctx, dmThread, "", "", "Hi")
	if err != nil {
		t.Fatal(err)
	}
	h.fake.RateLimit("chat.update", 20, 1)
	uerr := h.ch.UpdateLive(ctx, dmThread, id, "Hi there")
	if !errors.As(uerr, &ra) || ra.After != 20*time.Second {
		t.Fatalf("UpdateLive under a 429 = %v", uerr)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("live calls under 429 took %s: they waited", d)
	}
	if strings.Contains(uerr.Error(), botToken) {
		t.Error("the error shows the bot token")
	}
}
