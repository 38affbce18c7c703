package telegram_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// albumPartBody is update id, a photo of album group in chat, as the
// webhook gets it; an id ending in 2 has the album's caption.
func albumPartBody(id, chat int64, group string) []byte {
	n, c := strconv.FormatInt(id, 10), strconv.FormatInt(chat, 10)
	cap := ""
	if id%10 == 2 {
		cap = `"caption":"compare these",`
	}
	return []byte(`{"update_id":` + n + `,"message":{"message_id":` + n + `,"date":1700000000,` +
		`"chat":{"id":` + c + `,"type":"private"},"from":{"id":` + c + `,"is_bot":false,"first_name":"Ann"},` + cap +
		`"media_group_id":"` + group + `","photo":[{"file_id":"f` + n + `","file_unique_id":"u` + n + `","width":1,"height":1}]}}`)
}

// postParts posts the parts ids of album group one at a time, each after
// the previous one was answered (as a Bot API posting a chat's updates in
// order does), and wants each answered 200. The part whose id ends in 2
// carries the caption.
func postParts(t *testing.T, url string, chat int64, group string, ids ...int64) {
	t.Helper()
	for _, id := range ids {
		if code := post(t, url, hookSecret, albumPartBody(id, chat, group), true); code != http.StatusOK {
			t.Fatalf("part %d answered %d, want 200 once it is stored", id, code)
		}
	}
}

// wantAlbum waits for the album's Inbound: the first part's id, the
// caption and one photo per part.
func wantAlbum(ctx context.Context, t *testing.T, out <-chan channels.Inbound, first int64, parts int) {
	t.Helper()
	select {
	case in := <-out:
		if in.ExternalID != strconv.FormatInt(first, 10) || in.Text != "compare these" || len(in.Attachments) != parts {
			t.Fatalf("album = %+v, want update %d with the caption and %d photos", in, first, parts)
		}
	case <-ctx.Done():
		t.Fatal("the album never reached the handler")
	}
}

// wantNothingMore checks that no other Inbound comes within the album
// wait and a sweep's margin.
func wantNothingMore(t *testing.T, out <-chan channels.Inbound) {
	t.Helper()
	select {
	case in := <-out:
		t.Fatalf("handled again: %+v", in)
	case <-time.After(time.Second):
	}
}

// collectingWebhook starts a webhook harness on a new fake whose handler
// passes every Inbound to out.
func collectingWebhook(t *testing.T) (*harness, string, <-chan channels.Inbound) {
	t.Helper()
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	h, srv := webhookHarness(t, fake, 0)
	out := make(chan channels.Inbound, 10)
	h.Start(func(_ context.Context, in channels.Inbound) error { out <- in; return nil })
	h.waitConnected()
	return h, srv.URL, out
}

// An album whose parts are posted one at a time, each answered 200 once
// stored, is one Inbound; a part posted again after it was handled is
// answered 200 and makes nothing new.
func TestWebhookAlbumPostedPartByPartIsOneInbound(t *testing.T) {
	h, srv, out := collectingWebhook(t)
	postParts(t, srv, 55, "wg", 701, 702, 703)
	wantAlbum(h.Ctx(), t, out, 701, 3)
	postParts(t, srv, 55, "wg", 702)
	wantNothingMore(t, out)
}

// While the handler fails the parts are kept (each was answered 200) and
// the album is handed over again until it is stored, then once.
func TestWebhookAlbumKeptWhileTheHandlerFails(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	h, srv := webhookHarness(t, fake, 0)
	f := newFlakyHandler()
	h.Start(f.handle)
	h.waitConnected()
	postParts(t, srv.URL, 56, "wf", 801, 802)
	f.waitCalls(h.Ctx(), t, 3)
	f.heal()
	wantAlbum(h.Ctx(), t, f.out, 801, 2)
	wantNothingMore(t, f.out)
}

// Parts posted to two replicas on one store are one album, handed over
// by one of them; a text of the chat that follows comes after it.
func TestWebhookAlbumAcrossReplicas(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	albums := pgtest.Open(t, context.Background())
	a, srvA := replicaHarness(t, fake, 0, albums)
	b, srvB := replicaHarness(t, fake, 0, albums)
	out := make(chan channels.Inbound, 10)
	handler := func(_ context.Context, in channels.Inbound) error { out <- in; return nil }
	a.Start(handler)
	b.Start(handler)
	a.waitConnected()
	b.waitConnected()
	postParts(t, srvA.URL, 57, "wr", 901)
	postParts(t, srvB.URL, 57, "wr", 902)
	postParts(t, srvA.URL, 57, "wr", 903)
	wantAlbum(a.Ctx(), t, out, 901, 3)
	wantNothingMore(t, out)
}

// A text right after the parts hands the album over first, so the album
// is not overtaken by the message that asks about it.
func TestWebhookAlbumBeforeTheTextAfterIt(t *testing.T) {
	h, srv, out := collectingWebhook(t)
	postParts(t, srv, 58, "wt", 1001, 1002)
	if code := post(t, srv, hookSecret, updateBody(1003, 58, "which is better?"), true); code != http.StatusOK {
		t.Fatalf("text answered %d", code)
	}
	wantAlbum(h.Ctx(), t, out, 1001, 2)
	if in := <-out; in.Text != "which is better?" {
		t.Fatalf("after the album came %+v, want the text", in)
	}
}

// An album a dead replica claimed is handed over by a live one once the
// dead one's claim lapses.
func TestWebhookAlbumOfADeadReplica(t *testing.T) {
	fake := telegramtest.NewServer(token)
	t.Cleanup(fake.Close)
	albums := pgtest.Open(t, context.Background())
	ctx := context.Background()
	for _, id := range []int64{1101, 1102} {
		if err := albums.AddAlbumPart(ctx, telegram.AlbumPart{Chat: 59, Group: "wd", UpdateID: id,
			Update: albumPartBody(id, 59, "wd")}); err != nil {
			t.Fatal(err)
		}
	}
	claimed, _, err := albums.ClaimAlbums(ctx, telegram.AlbumClaim{Owner: "dead replica", Lease: 2 * time.Second})
	if err != nil || len(claimed) != 1 {
		t.Fatalf("the dead replica's claim: %+v, %v", claimed, err)
	}
	h, _ := replicaHarness(t, fake, 0, albums)
	out := make(chan channels.Inbound, 10)
	h.Start(func(_ context.Context, in channels.Inbound) error { out <- in; return nil })
	wantAlbum(h.Ctx(), t, out, 1101, 2)
}
