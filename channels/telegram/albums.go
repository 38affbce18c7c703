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
// collected here and handed to the handler as one Inbound. Nothing of an
// album is confirmed to Telegram before that Inbound was handled:
//
//   - Polling: the parts are parked (see inflight) while the album is
//     collected, so the next getUpdates goes out to fetch the other parts
//     but with its offset lowered to the first part (see pollClient): the
//     parts stay unconfirmed. When no part has come for AlbumWait (or ten
//     came, Telegram's most), or another update of the chat arrives (so the
//     chat's order holds), the album is queued on its chat's lane like any
//     update; until its Inbound is handled, polls wait as for any update.
//     A failing handler is called again as for any update, and a stop or a
//     crash leaves the parts unconfirmed, so Telegram delivers them again
//     and they make the same Inbound (same ExternalID) once more.
//   - Webhook: each part's request is held until the album's Inbound was
//     handled and is then answered with its outcome: 200 for all, or 503 for
//     all so that Telegram posts them again. A part posted again after its
//     album was handled is answered 200 at once. A Bot API that posts one
//     chat's updates one at a time only posts the next part once the
//     previous one is answered; such an album then reaches the handler one
//     part at a time, each after AlbumWait — nothing is confirmed before it
//     is handled, at the price of the album being several messages.

// maxAlbumParts is the most items Telegram puts in one album.
const maxAlbumParts = 10

// defaultAlbumWait is Options.AlbumWait's default.
const defaultAlbumWait = time.Second

// recentAlbumParts is how many handed-over album updates are remembered,
// to answer a webhook's redelivery of one at once.
const recentAlbumParts = 256

// albumKey names an album: Telegram's media_group_id within a chat.
type albumKey struct {
	chat  int64
	group string
}

// album is one album being collected or handed over.
type album struct {
	key   albumKey
	parts []*models.Update // in arrival order
	kick  chan struct{}    // a part arrived; buffered
	taken chan struct{}    // closed when collecting ends
	// onClose hands the album over (handOver) or gives it up (Start
	// stopping). It runs once, with the collector locked: it must be quick.
	onClose func(al *album, handOver bool)

	done chan struct{} // closed by the collector's finish
	err  error         // the handler's answer, set before done closes
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

// albumCollector holds the albums being collected.
type albumCollector struct {
	wait time.Duration

	mu   sync.Mutex
	open map[albumKey]*album
	// handing are the albums handed over and not yet finished: a part
	// posted again meanwhile waits for its album's outcome.
	handing map[albumKey]*album
	recent  [recentAlbumParts]int64 // handed-over update ids, a ring
	at      int
	wg      sync.WaitGroup // collecting and delivering goroutines
}

func newAlbumCollector(wait time.Duration) *albumCollector {
	if wait <= 0 {
		wait = defaultAlbumWait
	}
	return &albumCollector{wait: wait, open: map[albumKey]*album{}, handing: map[albumKey]*album{}}
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
	if al := a.handing[key]; al != nil && al.has(u.ID) {
		return al
	}
	al := a.open[key]
	if al == nil {
		al = &album{key: key, kick: make(chan struct{}, 1), taken: make(chan struct{}),
			onClose: onClose, done: make(chan struct{})}
		a.open[key] = al
		a.wg.Add(1)
		go a.watch(ctx, al)
	}
	if al.has(u.ID) {
		return al // posted again while its album is collected
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
	if handOver {
		a.handing[al.key] = al
	} else {
		al.err = errStopped
		close(al.done)
	}
	al.onClose(al, handOver)
}

// finish records the outcome of handing al over for the requests waiting
// on it; once handled, its parts are remembered.
func (a *albumCollector) finish(al *album, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.handing[al.key] == al {
		delete(a.handing, al.key)
	}
	if err == nil {
		for _, u := range al.parts {
			a.recent[a.at] = u.ID
			a.at = (a.at + 1) % recentAlbumParts
		}
	}
	al.err = err
	close(al.done)
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

// goDeliver runs deliver on a goroutine that waitIdle waits for.
func (a *albumCollector) goDeliver(deliver func()) { a.wg.Go(deliver) }

// wasHandedOver reports whether update id was handled with its album
// lately.
func (a *albumCollector) wasHandedOver(id int64) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Contains(a.recent[:], id)
}

// waitIdle blocks until no album is collected or delivered any more; the
// contexts they run under must have ended.
func (a *albumCollector) waitIdle() { a.wg.Wait() }
