package telegram

import (
	"context"
	"time"
)

// AlbumStore keeps the parts of the albums posted to the webhook until
// each album is handed over as one message. A part's request is answered
// as soon as the part is stored, so Telegram may post the next part only
// then, to this replica or another; any replica hands over an album whose
// latest part is quiet, also one begun by a replica that died. The
// daemon's PostgreSQL implements it.
type AlbumStore interface {
	// AddAlbumPart stores p. A part stored before (Telegram posted it
	// again) is kept once and does not make its album wait longer or
	// reopen it.
	AddAlbumPart(ctx context.Context, p AlbumPart) error
	// ClaimAlbums claims the albums q asks for, with their parts not yet
	// handed over, for q.Owner until q.Lease has passed; an album claimed
	// by another owner whose lease has not lapsed is not claimed. next is
	// how long until an album not claimed now is due (its parts quiet or
	// its lease lapsed), 0 when none is left; it is reported only when
	// q.Chat is 0 (a sweep).
	ClaimAlbums(ctx context.Context, q AlbumClaim) (albums []StoredAlbum, next time.Duration, err error)
	// FinishAlbum records that the parts of a, claimed by owner, were
	// handed over; a part added since keeps the album open.
	FinishAlbum(ctx context.Context, owner string, a StoredAlbum) error
	// ReleaseAlbum gives up owner's claim on a, to be claimed again after
	// retryIn.
	ReleaseAlbum(ctx context.Context, owner string, a StoredAlbum, retryIn time.Duration) error
	// PruneAlbums deletes the albums handed over before cutoff.
	PruneAlbums(ctx context.Context, cutoff time.Time) error
}

// AlbumPart is one part of an album, as stored: the update's JSON.
type AlbumPart struct {
	Chat     int64
	Group    string // Telegram's media_group_id
	UpdateID int64
	Update   []byte
}

// StoredAlbum is a claimed album and its parts not yet handed over,
// ordered by update id.
type StoredAlbum struct {
	Chat  int64
	Group string
	Parts []AlbumPart
}

// AlbumClaim asks an AlbumStore for albums to hand over.
type AlbumClaim struct {
	// Owner names the claimer; only it finishes or releases the claim.
	Owner string
	// Quiet: albums whose latest part was stored at least this long ago.
	Quiet time.Duration
	// Chat, when not 0, asks instead for every album of that chat however
	// recent: another update of the chat came and must not overtake them.
	Chat int64
	// Lease is how long the claim holds; then another replica may take
	// the album over.
	Lease time.Duration
	// Limit bounds the albums claimed at once.
	Limit int
}
