package telegram_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func tgAddr(chat int64, thread string) channels.Address {
	return channels.Address{Platform: "telegram", ChatID: strconv.FormatInt(chat, 10), ThreadID: thread}
}

// In a private chat the answer grows as one draft, and the final text is
// one message replying to the question; no draft is shown after it.
func TestLiveAnswerInAPrivateChatIsADraftThenOneMessage(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	_, question := h.fake.PushMessage(telegramtest.Incoming{ChatID: 60, ThreadID: 5, UserID: 60, Text: "6×7?"})
	to := tgAddr(60, "5")

	id, err := h.ch.BeginLive(ctx, to, strconv.Itoa(question), "", "The answer")
	if err != nil {
		t.Fatalf("BeginLive: %v", err)
	}
	if !strings.HasPrefix(id, "draft:") {
		t.Fatalf("live id in a private chat = %q, want a draft", id)
	}
	for _, text := range []string{"The answer is **4", "The answer is **42**"} {
		if err := h.ch.UpdateLive(ctx, to, id, text); err != nil {
			t.Fatalf("UpdateLive(%q): %v", text, err)
		}
	}
	drafts := h.fake.Drafts(60)
	if len(drafts) != 3 {
		t.Fatalf("%d drafts shown, want 3: %+v", len(drafts), drafts)
	}
	for _, d := range drafts {
		if "draft:"+strconv.FormatInt(d.DraftID, 10) != id || d.ThreadID != 5 {
			t.Errorf("draft %+v is not draft %s in topic 5", d, id)
		}
	}
	if last := drafts[2]; last.Text != "The answer is <b>42</b>" || last.Visible != "The answer is 42" {
		t.Errorf("last draft = %+v", last)
	}
	if msgs := h.fake.Messages(60); len(msgs) != 0 {
		t.Fatalf("the live answer sent messages: %+v", msgs)
	}

	final := "The answer is **42**.\n\nAsk again any time."
	buttons := [][]channels.Button{{{Label: "Thanks", Data: "thx"}}}
	got, err := h.ch.FinishLive(ctx, channels.Outbound{To: to, Text: final, ReplyTo: strconv.Itoa(question), Buttons: buttons, Replaces: []string{id}})
	if err != nil {
		t.Fatalf("FinishLive: %v", err)
	}
	msgs := h.fake.Messages(60)
	if len(msgs) != 1 {
		t.Fatalf("final answer sent as %d messages: %+v", len(msgs), msgs)
	}
	m := msgs[0]
	if m.Visible != "The answer is 42.\n\nAsk again any time." || m.ReplyTo != question || m.ThreadID != 5 || len(m.Buttons) != 1 {
		t.Errorf("final message = %+v", m)
	}
	if got != strconv.Itoa(m.ID) {
		t.Errorf("FinishLive returned %q, the message is %d", got, m.ID)
	}
	if n := len(h.fake.Drafts(60)); n != 3 {
		t.Errorf("%d drafts after the final message, want none after it", n-3)
	}
}

// In a group the answer is one message edited as it grows, and the final
// text is edited into it: one message, exactly the final text.
func TestLiveAnswerInAGroupIsOneEditedMessage(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	_, question := h.fake.PushMessage(telegramtest.Incoming{ChatID: -70, UserID: 7, Text: "status?"})
	to := tgAddr(-70, "")

	id, err := h.ch.BeginLive(ctx, to, strconv.Itoa(question), "", "All")
	if err != nil {
		t.Fatalf("BeginLive: %v", err)
	}
	for _, text := range []string{"All *green*", "All *green*"} { // the second shows nothing new
		if err := h.ch.UpdateLive(ctx, to, id, text); err != nil {
			t.Fatalf("UpdateLive(%q): %v", text, err)
		}
	}
	msgs := h.fake.Messages(-70)
	if len(msgs) != 1 || strconv.Itoa(msgs[0].ID) != id || msgs[0].ReplyTo != question || msgs[0].Visible != "All green" {
		t.Fatalf("live message = %+v, want message %s replying to %d showing \"All green\"", msgs, id, question)
	}
	buttons := [][]channels.Button{{{Label: "Details", Data: "more"}}}
	final := "All *green* & <fine>."
	got, err := h.ch.FinishLive(ctx, channels.Outbound{To: to, Text: final, ReplyTo: strconv.Itoa(question), Buttons: buttons, Replaces: []string{id}})
	if err != nil {
		t.Fatalf("FinishLive: %v", err)
	}
	if got != id {
		t.Errorf("FinishLive returned %q, want the live message %s", got, id)
	}
	msgs = h.fake.Messages(-70)
	if len(msgs) != 1 {
		t.Fatalf("final answer is %d messages: %+v", len(msgs), msgs)
	}
	if m := msgs[0]; m.Text != "All <i>green</i> &amp; &lt;fine&gt;." || m.Visible != "All green & <fine>." || len(m.Buttons) != 1 || m.Buttons[0][0].CallbackData != "more" {
		t.Errorf("final message = %+v", m)
	}
	if n := h.fake.Requests("sendMessageDraft"); n != 0 {
		t.Errorf("%d drafts tried in a group", n)
	}
	if e := h.fake.Edits(-70); len(e) != 2 {
		t.Errorf("%d edits, want 2 (one update, the final): %+v", len(e), e)
	}
}

// htmlParts are the texts of msgs as sent, in order.
func htmlParts(msgs []telegramtest.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Text
	}
	return out
}

// A final text longer than the live messages goes on in new messages, split
// exactly as Send splits it; when it needs fewer, the live messages left
// over are deleted.
func TestFinishLiveSplitsAsSendAndDeletesLeftOvers(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	report, _ := channeltest.LongReport("All **green**.", 150, "fmt.Println(%d)")
	if _, err := h.ch.Send(ctx, channels.Outbound{To: tgAddr(-81, ""), Text: report}); err != nil {
		t.Fatal(err)
	}
	want := htmlParts(h.fake.Messages(-81))
	if len(want) < 3 {
		t.Fatalf("the report is only %d messages", len(want))
	}

	to := tgAddr(-80, "")
	var live []string
	for _, text := range []string{"# Build report", "more"} {
		id, err := h.ch.BeginLive(ctx, to, "", "", text)
		if err != nil {
			t.Fatalf("BeginLive: %v", err)
		}
		live = append(live, id)
	}
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: to, Text: report, Replaces: live}); err != nil {
		t.Fatalf("FinishLive: %v", err)
	}
	msgs := h.fake.Messages(-80)
	if got := htmlParts(msgs); strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("the final report is %d messages unlike Send's %d", len(got), len(want))
	}
	if strconv.Itoa(msgs[0].ID) != live[0] || strconv.Itoa(msgs[1].ID) != live[1] {
		t.Errorf("the first parts were not edited into the live messages %v", live)
	}

	live = live[:0]
	for _, text := range []string{"one", "two", "three"} {
		id, err := h.ch.BeginLive(ctx, to, "", "", text)
		if err != nil {
			t.Fatalf("BeginLive: %v", err)
		}
		live = append(live, id)
	}
	before := len(h.fake.Messages(-80))
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: to, Text: "Short after all.", Replaces: live}); err != nil {
		t.Fatalf("FinishLive: %v", err)
	}
	msgs = h.fake.Messages(-80)
	if len(msgs) != before-2 || msgs[len(msgs)-1].Visible != "Short after all." {
		t.Errorf("after a short final: %d messages (want %d), last %+v", len(msgs), before-2, msgs[len(msgs)-1])
	}
	deleted := h.fake.Deleted(-80)
	if len(deleted) != 2 || strconv.Itoa(deleted[0].ID) != live[1] || strconv.Itoa(deleted[1].ID) != live[2] {
		t.Errorf("deleted %+v, want the left-over live messages %v", deleted, live[1:])
	}
}

// A live message someone deleted (or too old to edit) is replaced by a new
// message with its part.
func TestFinishLiveReplacesAGoneLiveMessage(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	to := tgAddr(-130, "")
	id, err := h.ch.BeginLive(ctx, to, "", "", "Soon")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.ch.Delete(ctx, to, id); err != nil {
		t.Fatal(err)
	}
	got, err := h.ch.FinishLive(ctx, channels.Outbound{To: to, Text: "Done **now**.", Replaces: []string{id}})
	if err != nil {
		t.Fatalf("FinishLive over a deleted live message: %v", err)
	}
	msgs := h.fake.Messages(-130)
	if len(msgs) != 1 || msgs[0].Visible != "Done now." || got != strconv.Itoa(msgs[0].ID) || got == id {
		t.Errorf("FinishLive = %q, messages %+v; want one new message with the final text", got, msgs)
	}
}

// FinishLive called again, after it succeeded or after it failed midway,
// sends no part twice: drafts and messages alike.
func TestFinishLiveAgainDeliversNothingTwice(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	report, _ := channeltest.LongReport("Twice?", 150, "x := %d")

	private := tgAddr(90, "")
	draft, err := h.ch.BeginLive(ctx, private, "", "", "Twice")
	if err != nil {
		t.Fatal(err)
	}
	msg := channels.Outbound{To: private, Text: report, Replaces: []string{draft}}
	first, err := h.ch.FinishLive(ctx, msg)
	if err != nil {
		t.Fatal(err)
	}
	sent := len(h.fake.Messages(90))
	again, err := h.ch.FinishLive(ctx, msg)
	if err != nil {
		t.Fatalf("FinishLive again: %v", err)
	}
	if n := len(h.fake.Messages(90)); n != sent || again != first {
		t.Errorf("second FinishLive: %d messages (had %d), returned %s (first %s)", n, sent, again, first)
	}

	group := tgAddr(-90, "")
	live, err := h.ch.BeginLive(ctx, group, "", "", "Twice")
	if err != nil {
		t.Fatal(err)
	}
	h.fake.Fail("sendMessage", 500, 0, 1) // the second part fails
	msg = channels.Outbound{To: group, Text: report, Replaces: []string{live}}
	if _, err := h.ch.FinishLive(ctx, msg); err == nil {
		t.Fatal("FinishLive succeeded through a failed part")
	}
	if _, err := h.ch.FinishLive(ctx, msg); err != nil {
		t.Fatalf("FinishLive after a failure: %v", err)
	}
	msgs := h.fake.Messages(-90)
	edits := len(h.fake.Edits(-90))
	if _, err := h.ch.FinishLive(ctx, msg); err != nil {
		t.Fatalf("FinishLive a third time: %v", err)
	}
	if len(msgs) != sent || len(h.fake.Messages(-90)) != sent || len(h.fake.Edits(-90)) != edits {
		t.Errorf("group: %d messages, want %d as in the private chat; a third call changed something", len(msgs), sent)
	}
	if strconv.Itoa(msgs[0].ID) != live {
		t.Errorf("the first part is not in the live message %s", live)
	}
}

// A 429 on a live update is handed back at once, with the chat's cooldown
// recorded: the next update does not reach Telegram early, and FinishLive
// waits the cooldown out and delivers.
func TestLiveUpdateRateLimitedReturnsAtOnce(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	for _, chat := range []int64{-95, 95} { // a message, a draft
		to := tgAddr(chat, "")
		id, err := h.ch.BeginLive(ctx, to, "", "", "Counting")
		if err != nil {
			t.Fatal(err)
		}
		h.fake.FloodChat(chat, 1)
		start := time.Now()
		var ra *channels.RetryAfterError
		if err := h.ch.UpdateLive(ctx, to, id, "Counting 1"); !errors.As(err, &ra) || ra.After < time.Second {
			t.Fatalf("chat %d: UpdateLive into a flood = %v, want a RetryAfterError of 1s", chat, err)
		}
		if err := h.ch.UpdateLive(ctx, to, id, "Counting 1 2"); !errors.As(err, &ra) {
			t.Fatalf("chat %d: UpdateLive during the cooldown = %v, want a RetryAfterError", chat, err)
		}
		if took := time.Since(start); took > 500*time.Millisecond {
			t.Errorf("chat %d: rate-limited updates took %v: they waited", chat, took)
		}
		if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: to, Text: "Counting 1 2 3", Replaces: []string{id}}); err != nil {
			t.Fatalf("chat %d: FinishLive after a 429: %v", chat, err)
		}
		if took := time.Since(start); took < 900*time.Millisecond {
			t.Errorf("chat %d: FinishLive took %v, did not wait out the cooldown", chat, took)
		}
		msgs := h.fake.Messages(chat)
		if len(msgs) != 1 || msgs[0].Visible != "Counting 1 2 3" {
			t.Errorf("chat %d: messages = %+v", chat, msgs)
		}
		if early := h.fake.TooEarly(chat); len(early) > 0 {
			t.Errorf("chat %d: %d call(s) came before the retry_after had passed", chat, len(early))
		}
	}
}

// Where the Bot API has no sendMessageDraft, private chats get an edited
// message, and later answers do not try drafts again; a chat that refuses
// drafts is remembered on its own.
func TestLiveDraftsRefusedFallBackToEdits(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	h.fake.FailWith("sendMessageDraft", telegramtest.Failure{Status: 400, Description: "Bad Request: TEXTDRAFT_PEER_INVALID"})
	refusing, other := tgAddr(101, ""), tgAddr(102, "")
	id, err := h.ch.BeginLive(ctx, refusing, "", "", "Hello")
	if err != nil {
		t.Fatalf("BeginLive where drafts are refused: %v", err)
	}
	if strings.HasPrefix(id, "draft:") || len(h.fake.Messages(101)) != 1 {
		t.Fatalf("refused draft: live id %q, messages %+v; want a message", id, h.fake.Messages(101))
	}
	if _, err := h.ch.BeginLive(ctx, refusing, "", "", "Hello again"); err != nil {
		t.Fatal(err)
	}
	if id, err := h.ch.BeginLive(ctx, other, "", "", "Hi"); err != nil || !strings.HasPrefix(id, "draft:") {
		t.Errorf("another chat: BeginLive = %q, %v; want a draft", id, err)
	}
	if n := h.fake.Requests("sendMessageDraft"); n != 2 {
		t.Errorf("%d draft calls, want 2 (the refused one, the other chat)", n)
	}

	h.fake.RemoveMethod("sendMessageDraft")
	private := tgAddr(103, "")
	id, err = h.ch.BeginLive(ctx, private, "", "", "Hel")
	if err != nil || strings.HasPrefix(id, "draft:") {
		t.Fatalf("BeginLive without sendMessageDraft = %q, %v; want a message", id, err)
	}
	if err := h.ch.UpdateLive(ctx, private, id, "Hello **there**"); err != nil {
		t.Fatalf("UpdateLive: %v", err)
	}
	if _, err := h.ch.FinishLive(ctx, channels.Outbound{To: private, Text: "Hello **there**, done.", Replaces: []string{id}}); err != nil {
		t.Fatalf("FinishLive: %v", err)
	}
	if msgs := h.fake.Messages(103); len(msgs) != 1 || msgs[0].Visible != "Hello there, done." {
		t.Errorf("messages = %+v", msgs)
	}
	if _, err := h.ch.BeginLive(ctx, tgAddr(104, ""), "", "", "Hi"); err != nil {
		t.Fatal(err)
	}
	if n := h.fake.Requests("sendMessageDraft"); n != 3 {
		t.Errorf("%d draft calls, want 3: a Bot API without drafts is tried once", n)
	}
}

// Partial Markdown never fails a live call: an unclosed code fence renders,
// an answer with nothing visible yet shows a mark, and HTML Telegram
// refuses goes as plain text.
func TestLivePartialMarkdownNeverFails(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	for _, chat := range []int64{-110, 110} {
		to := tgAddr(chat, "")
		id, err := h.ch.BeginLive(ctx, to, "", "", "```go\n")
		if err != nil {
			t.Fatalf("chat %d: BeginLive with an empty open code block: %v", chat, err)
		}
		if got := shownNow(h, chat, id); got != "…" {
			t.Errorf("chat %d: an empty code block shows %q, want a mark", chat, got)
		}
		if err := h.ch.UpdateLive(ctx, to, id, "Here:\n```go\nfmt.Println(\"a < b\""); err != nil {
			t.Fatalf("chat %d: UpdateLive with an unclosed fence: %v", chat, err)
		}
		if got := shownNow(h, chat, id); got != "Here:\n\nfmt.Println(\"a < b\"" {
			t.Errorf("chat %d: an unclosed fence shows %q", chat, got)
		}
		method := "editMessageText"
		if strings.HasPrefix(id, "draft:") {
			method = "sendMessageDraft"
		}
		h.fake.FailWith(method, telegramtest.Failure{Status: 400, Description: "Bad Request: can't parse entities: unsupported start tag"})
		if err := h.ch.UpdateLive(ctx, to, id, "Here:\n```go\nfmt.Println(\"a < b\")"); err != nil {
			t.Fatalf("chat %d: UpdateLive refused as HTML: %v", chat, err)
		}
		if got := shownNow(h, chat, id); got != "Here:\n\nfmt.Println(\"a < b\")" {
			t.Errorf("chat %d shows %q after a refused HTML", chat, got)
		}
	}
}

// shownNow is what live answer id in chat shows now.
func shownNow(h *harness, chat int64, id string) string {
	if rest, ok := strings.CutPrefix(id, "draft:"); ok {
		drafts := h.fake.Drafts(chat)
		if len(drafts) == 0 || strconv.FormatInt(drafts[len(drafts)-1].DraftID, 10) != rest {
			return ""
		}
		return drafts[len(drafts)-1].Visible
	}
	n, _ := strconv.Atoi(id)
	m, _ := h.fake.Message(chat, n)
	return m.Visible
}

// LiveLimit runes of an ordinary answer, code and links and all, show
// whole in one live message.
func TestLiveLimitFitsOneMessage(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	n := h.ch.LiveLimit()
	if n <= 0 || n > 4096 {
		t.Fatalf("LiveLimit = %d", n)
	}
	answer := strings.Repeat("## Steps 🚀\n\n1. Run `go build ./...` and read the [docs](https://example.com/docs/page).\n"+
		"2. Use **bold** and *italic* text, then `x := y`.\n\n```go\nif a < b && c > d {\n\treturn\n}\n```\n\n"+
		"Some plain prose follows, with Grüße & «quotes».\n\n", n/100)
	text := string([]rune(answer)[:n])
	id, err := h.ch.BeginLive(ctx, tgAddr(-120, ""), "", "", text)
	if err != nil {
		t.Fatal(err)
	}
	m := h.fake.Messages(-120)[0]
	if strconv.Itoa(m.ID) != id || strings.HasSuffix(m.Visible, "\n…") {
		t.Errorf("a %d-rune answer was cut: shows %d UTF-16 units ending %q", n, utf16Len(m.Visible), m.Visible[len(m.Visible)-10:])
	}
}

// A 429 on the first draft is handed back at once and does not count as
// Telegram refusing drafts: once the cooldown is over, the answer is a
// draft.
func TestLiveBeginRateLimitedKeepsDrafts(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.Ctx()
	to := tgAddr(140, "")
	h.fake.FloodChat(140, 1)
	start := time.Now()
	_, err := h.ch.BeginLive(ctx, to, "", "", "Hi")
	var ra *channels.RetryAfterError
	if !errors.As(err, &ra) || time.Since(start) > 500*time.Millisecond {
		t.Fatalf("BeginLive into a flood = %v after %v, want a RetryAfterError at once", err, time.Since(start))
	}
	time.Sleep(ra.After) // what a caller told to retry after does
	id, err := h.ch.BeginLive(ctx, to, "", "", "Hi")
	if err != nil || !strings.HasPrefix(id, "draft:") {
		t.Errorf("BeginLive after the cooldown = %q, %v; want a draft", id, err)
	}
	if msgs := h.fake.Messages(140); len(msgs) != 0 {
		t.Errorf("a rate-limited draft fell back to messages: %+v", msgs)
	}
	if early := h.fake.TooEarly(140); len(early) > 0 {
		t.Errorf("%d call(s) came before the retry_after had passed", len(early))
	}
}
