package telegram

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"
)

// Albums. Telegram sends each photo, video or file of an album as an update
// of its own, sharing a media_group_id, within about a second. They are
// collected and handed to the handler as one Inbound. Nothing of an album
// is confirmed to Telegram before that Inbound was handled:
//
//   - Polling (this file): the parts are parked (see inflight) while the
//     album is collected, so the next getUpdates goes out to fetch the
//     other parts but with its offset lowered to the first part (see
//     pollClient): the parts stay unconfirmed. When no part has come for
//     AlbumWait (or ten came, Telegram's most), or another update of the
//     chat arrives (so the chat's order holds), the album is queued on its
//     chat's lane like any update; until its Inbound is handled, polls
//     wait as for any update. A failing handler is called again as for any
//     update, and a stop or a crash leaves the parts unconfirmed, so
//     Telegram delivers them again and they make the same Inbound (same
//     ExternalID) once more.
//   - Webhook (webhook_albums.go): each part is stored in the AlbumStore
//     and then answered 200, so a Bot API that posts a chat's updates one
//     at a time still gets the next part to us; any replica hands over an
//     album once its parts are quiet for AlbumWait.

// maxAlbumParts is the most items Telegram puts in one album.
const maxAlbumParts = 10

// defaultAlbumWait is Options.AlbumWait's default.
const defaultAlbumWait = time.Second

// albumKey names an album: Telegram's media_group_id within a chat.
type albumKey struct {
	chat  int64
	group string
}

// album is one polled album being collected.
type album struct {
	key   albumKey
	parts []*models.Update // in arrival order
	kick  chan struct{}    // a part arrived; buffered
	taken chan struct{}    // closed when collecting ends
	// onClose hands the album over (handOver) or gives it up (Start
	// stopping). It runs once, with the collector locked: it must be quick.
	onClose func(al *album, handOver bool)
}

// has reports whether update id is a part of al.
func (al *album) has(id int64) bool {
	return slices.ContainsFunc(al.parts, func(p *models.Update) bool { return p.ID == id })
}

// updates returns the album's parts ordered by update id.
func (al *album) updates() []*models.Update {
	out := slices.Clone(al.parts)
	slices.SortFunc(out, func(a, b *models.Update) int { return int(a.ID - b.ID) })
	return out
}

// albumCollector holds the polled albums being collected.
type albumCollector struct {
	wait time.Duration

	mu   sync.Mutex
	open map[albumKey]*album
	wg   sync.WaitGroup // collecting goroutines
}

func newAlbumCollector(wait time.Duration) *albumCollector {
	return &albumCollector{wait: wait, open: map[albumKey]*album{}}
}

// albumOf returns the album u is a part of, if any: a message of a person
// with a media_group_id.
func albumOf(u *models.Update) (albumKey, bool) {
	m := u.Message
	if m == nil || m.MediaGroupID == "" || m.From == nil || m.From.IsBot {
		return albumKey{}, false
	}
	return albumKey{chat: m.Chat.ID, group: m.MediaGroupID}, true
}

// add puts u in its album, starting the album (and its wait, under ctx)
// when it is the first part; onClose is the new album's.
func (a *albumCollector) add(ctx context.Context, key albumKey, u *models.Update, onClose func(*album, bool)) *album {
	a.mu.Lock()
	defer a.mu.Unlock()
	al := a.open[key]
	if al == nil {
		al = &album{key: key, kick: make(chan struct{}, 1), taken: make(chan struct{}), onClose: onClose}
		a.open[key] = al
		a.wg.Add(1)
		go a.watch(ctx, al)
	}
	if al.has(u.ID) {
		return al // fetched again while its album is collected
	}
	al.parts = append(al.parts, u)
	if len(al.parts) >= maxAlbumParts {
		a.closeLocked(al, true)
		return al
	}
	select {
	case al.kick <- struct{}{}:
	default:
	}
	return al
}

// watch closes al once no part has come for the wait, or gives it up when
// ctx ends.
func (a *albumCollector) watch(ctx context.Context, al *album) {
	defer a.wg.Done()
	t := time.NewTimer(a.wait)
	defer t.Stop()
	for {
		select {
		case <-al.taken:
			return
		case <-al.kick:
			t.Reset(a.wait)
		case <-t.C:
			a.close(al, true)
			return
		case <-ctx.Done():
			a.close(al, false)
			return
		}
	}
}

func (a *albumCollector) close(al *album, handOver bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.closeLocked(al, handOver)
}

// closeLocked ends collecting al, once; a later part of the same group
// starts a new album.
func (a *albumCollector) closeLocked(al *album, handOver bool) {
	select {
	case <-al.taken:
		return
	default:
	}
	close(al.taken)
	delete(a.open, al.key)
	al.onClose(al, handOver)
}

// flushChat hands over the albums of chat being collected: another update
// of the chat came, and it must not overtake them.
func (a *albumCollector) flushChat(chat int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for key, al := range a.open {
		if key.chat == chat {
			a.closeLocked(al, true)
		}
	}
}

// waitIdle blocks until no album is collected any more; the context
// they wait under must have ended.
func (a *albumCollector) waitIdle() { a.wg.Wait() }
