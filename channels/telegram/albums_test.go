package telegram_test

import (
	"slices"
	"strconv"
	"testing"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// sendAlbum sends three parts of one album in chat: two photos (the second
// captioned) and a document, and returns their update ids.
func sendAlbum(fake *telegramtest.Server, chat int64, group string) []int64 {
	fake.AddFile("al-1", "one.jpg", []byte("first photo"))
	fake.AddFile("al-2", "two.jpg", []byte("second photo"))
	fake.AddFile("al-3", "notes.txt", []byte("the notes"))
	parts := []struct {
		caption string
		media   telegramtest.Media
	}{
		{"", telegramtest.Media{Kind: "photo", FileID: "al-1", Size: 11}},
		{"compare these", telegramtest.Media{Kind: "photo", FileID: "al-2", Size: 12}},
		{"", telegramtest.Media{Kind: "document", FileID: "al-3", FileName: "notes.txt", MimeType: "text/plain", Size: 9}},
	}
	var ids []int64
	for _, p := range parts {
		extra := p.media.Fields()
		extra["media_group_id"] = group
		if p.caption != "" {
			extra["caption"] = p.caption
		}
		id, _ := fake.PushMessage(telegramtest.Incoming{ChatID: chat, UserID: chat, Extra: extra})
		ids = append(ids, id)
	}
	return ids
}

// checkAlbum checks that in is the album sendAlbum sent, first update
// first.
func checkAlbum(t *testing.T, h *harness, in channels.Inbound, ids []int64) {
	t.Helper()
	if in.ExternalID != strconv.FormatInt(ids[0], 10) || in.Text != "compare these" || len(in.Attachments) != 3 {
		t.Fatalf("album inbound = %+v, want update %d with the caption and three attachments", in, ids[0])
	}
	for i, want := range []string{"first photo", "second photo", "the notes"} {
		channeltest.WantBody(h.Ctx(), t, in.Attachments[i], []byte(want))
	}
	if in.Attachments[2].Name != "notes.txt" || in.Attachments[0].Kind != channels.KindPhoto {
		t.Errorf("attachments = %+v", in.Attachments)
	}
}

func TestAlbumIsOneInbound(t *testing.T) {
	h := pollingHarness(t)
	ids := sendAlbum(h.fake, 51, "g51")
	in := h.Next()
	checkAlbum(t, h, in, ids)
	if in.MessageID != "1" {
		t.Errorf("message id = %s, want the first part's (1)", in.MessageID)
	}
	h.fake.SendText(51, 51, "Ann", "after")
	if next := h.Next(); next.Text != "after" {
		t.Errorf("next event = %+v, want the text (the album came once)", next)
	}
	channeltestWaitConfirmed(t, h)
}

// channeltestWaitConfirmed waits until Telegram has no update pending.
func channeltestWaitConfirmed(t *testing.T, h *harness) {
	t.Helper()
	h.WaitUntil("every update confirmed", func() bool { return len(h.fake.Pending()) == 0 })
}

// An album whose handler fails is confirmed to Telegram only once it was
// handled, and is handled once.
func TestAlbumNotConfirmedUntilHandled(t *testing.T) {
	h := newHarness(t, nil)
	f := newFlakyHandler()
	h.Start(f.handle)
	h.waitPolling()
	ids := sendAlbum(h.fake, 52, "g52")
	first := strconv.FormatInt(ids[0], 10)
	f.waitCalls(h.Ctx(), t, 3) // failed, retried
	for _, id := range ids {
		if !slices.Contains(h.fake.Pending(), id) {
			t.Fatalf("album part %d confirmed while its handler fails: pending %v", id, h.fake.Pending())
		}
	}
	for _, id := range ids[1:] {
		if n := f.callsOf(strconv.FormatInt(id, 10)); n != 0 {
			t.Errorf("part %d reached the handler on its own %d times", id, n)
		}
	}
	f.heal()
	checkAlbum(t, h, <-f.out, ids)
	channeltestWaitConfirmed(t, h)
	select {
	case in := <-f.out:
		t.Errorf("handled again: %+v", in)
	default:
	}
	t.Logf("the album was handed to the handler %d times", f.callsOf(first))
}

// An album cut short by a stop is delivered again, whole, after a restart.
func TestAlbumRedeliveredAfterRestart(t *testing.T) {
	h := newHarness(t, nil)
	f := newFlakyHandler()
	h.Start(f.handle)
	h.waitPolling()
	ids := sendAlbum(h.fake, 53, "g53")
	f.waitCalls(h.Ctx(), t, 2)
	h.Stop()
	restarted := newHarnessOn(t, h.fake, nil)
	restarted.Start(nil)
	checkAlbum(t, restarted, restarted.Next(), ids)
	channeltestWaitConfirmed(t, restarted)
}

func TestUncaptionedPhotoReachesHandler(t *testing.T) {
	h := pollingHarness(t)
	h.fake.AddFile("solo", "p.jpg", []byte("a screenshot"))
	h.fake.SendMedia(54, 54, "", telegramtest.Media{Kind: "photo", FileID: "solo", Size: 12})
	in := h.Next()
	if in.Text != "" || len(in.Attachments) != 1 {
		t.Fatalf("uncaptioned photo = %+v, want no text and the photo", in)
	}
	channeltest.WantBody(h.Ctx(), t, in.Attachments[0], []byte("a screenshot"))
	if got := h.fake.Messages(54); len(got) != 0 {
		t.Errorf("the photo was answered %+v", got)
	}
}
