package postgres_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/channels/telegram"
	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

func addPart(t *testing.T, db *postgres.DB, chat int64, group string, id int64) {
	t.Helper()
	p := telegram.AlbumPart{Chat: chat, Group: group, UpdateID: id, Update: fmt.Appendf(nil, `{"update_id":%d}`, id)}
	if err := db.AddAlbumPart(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func claim(t *testing.T, db *postgres.DB, q telegram.AlbumClaim) ([]telegram.StoredAlbum, time.Duration) {
	t.Helper()
	if q.Lease == 0 {
		q.Lease = time.Minute
	}
	albums, next, err := db.ClaimAlbums(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return albums, next
}

func partIDs(a telegram.StoredAlbum) []int64 {
	var ids []int64
	for _, p := range a.Parts {
		ids = append(ids, p.UpdateID)
	}
	return ids
}

// An album is claimed only once its parts are quiet, whole, by one owner
// at a time; a part posted again is kept once.
func TestAlbumClaimedWhenQuiet(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	addPart(t, db, 7, "g", 12)
	addPart(t, db, 7, "g", 11)
	addPart(t, db, 7, "g", 12) // posted again

	albums, next := claim(t, db, telegram.AlbumClaim{Owner: "a", Quiet: time.Hour})
	if len(albums) != 0 || next < 59*time.Minute || next > time.Hour {
		t.Fatalf("claimed %+v before the album was quiet; next = %v, want about an hour", albums, next)
	}
	albums, _ = claim(t, db, telegram.AlbumClaim{Owner: "a"})
	if len(albums) != 1 || albums[0].Chat != 7 || albums[0].Group != "g" || !slices.Equal(partIDs(albums[0]), []int64{11, 12}) {
		t.Fatalf("claimed %+v, want album 7/g with parts 11, 12 once each, in order", albums)
	}
	if string(albums[0].Parts[0].Update) != `{"update_id":11}` {
		t.Errorf("part body = %q", albums[0].Parts[0].Update)
	}
	if again, next := claim(t, db, telegram.AlbumClaim{Owner: "b"}); len(again) != 0 || next < 50*time.Second {
		t.Fatalf("another owner claimed %+v while the lease holds (next %v)", again, next)
	}
}

// A finished album is done: a part Telegram posts again makes nothing
// new, a part that comes late is an album of its own.
func TestAlbumFinished(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	addPart(t, db, 7, "g", 1)
	addPart(t, db, 7, "g", 2)
	albums, _ := claim(t, db, telegram.AlbumClaim{Owner: "a"})
	if err := db.FinishAlbum(ctx, "a", albums[0]); err != nil {
		t.Fatal(err)
	}
	addPart(t, db, 7, "g", 2)
	if again, next := claim(t, db, telegram.AlbumClaim{Owner: "a"}); len(again) != 0 || next != 0 {
		t.Fatalf("after a part was posted again: claimed %+v, next %v; want nothing", again, next)
	}
	addPart(t, db, 7, "g", 3)
	late, _ := claim(t, db, telegram.AlbumClaim{Owner: "a"})
	if len(late) != 1 || !slices.Equal(partIDs(late[0]), []int64{3}) {
		t.Fatalf("late part: claimed %+v, want only part 3", late)
	}
}

// A part stored while its album is handed over keeps the album open for
// that part alone.
func TestAlbumPartDuringHandOver(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	addPart(t, db, 7, "g", 1)
	albums, _ := claim(t, db, telegram.AlbumClaim{Owner: "a"})
	addPart(t, db, 7, "g", 2)
	if err := db.FinishAlbum(ctx, "a", albums[0]); err != nil {
		t.Fatal(err)
	}
	rest, _ := claim(t, db, telegram.AlbumClaim{Owner: "b"})
	if len(rest) != 1 || !slices.Equal(partIDs(rest[0]), []int64{2}) {
		t.Fatalf("claimed %+v, want part 2 alone", rest)
	}
}

// A released album is claimed again after the retry; a lapsed lease (a
// dead replica's) lets another owner claim it, and the dead owner can no
// longer finish it.
func TestAlbumReleasedAndLapsed(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	addPart(t, db, 7, "g", 1)
	albums, _ := claim(t, db, telegram.AlbumClaim{Owner: "a"})
	if err := db.ReleaseAlbum(ctx, "a", albums[0], time.Hour); err != nil {
		t.Fatal(err)
	}
	if again, next := claim(t, db, telegram.AlbumClaim{Owner: "a"}); len(again) != 0 || next < 59*time.Minute {
		t.Fatalf("claimed %+v before the retry (next %v)", again, next)
	}
	if err := db.ReleaseAlbum(ctx, "a", albums[0], 0); err != nil {
		t.Fatal(err) // not a's any more: changes nothing
	}

	addPart(t, db, 8, "h", 5)
	dead, _ := claim(t, db, telegram.AlbumClaim{Owner: "dead", Lease: time.Millisecond})
	if len(dead) != 1 || dead[0].Chat != 8 {
		t.Fatalf("claimed %+v, want album 8/h", dead)
	}
	time.Sleep(5 * time.Millisecond) // the lease lapses
	alive, _ := claim(t, db, telegram.AlbumClaim{Owner: "alive"})
	if len(alive) != 1 || alive[0].Chat != 8 {
		t.Fatalf("after the lease lapsed: claimed %+v, want album 8/h", alive)
	}
	if err := db.FinishAlbum(ctx, "dead", dead[0]); err != nil {
		t.Fatal(err)
	}
	if err := db.FinishAlbum(ctx, "alive", alive[0]); err != nil {
		t.Fatal(err)
	}
	var handed bool
	if err := db.Pool().QueryRow(ctx, `SELECT handed_at IS NOT NULL FROM telegram_albums WHERE chat_id = 8`).Scan(&handed); err != nil || !handed {
		t.Fatalf("album handed = %v (%v) after its live owner finished it", handed, err)
	}
}

// Asked for a chat, the store hands over that chat's albums however
// recent, and no other chat's.
func TestAlbumClaimedForItsChat(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	addPart(t, db, 7, "g", 1)
	addPart(t, db, 9, "k", 2)
	albums, _ := claim(t, db, telegram.AlbumClaim{Owner: "a", Quiet: time.Hour, Chat: 9})
	if len(albums) != 1 || albums[0].Chat != 9 {
		t.Fatalf("claimed %+v, want chat 9's album alone", albums)
	}
}

// Replicas claiming at once never both get an album.
func TestAlbumClaimedByOneReplica(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	for g := range 20 {
		addPart(t, db, int64(g), "g", int64(100+g))
	}
	var mu sync.Mutex
	got := map[int64]int{}
	var wg sync.WaitGroup
	for r := range 4 {
		wg.Go(func() {
			for range 10 {
				albums, _, err := db.ClaimAlbums(ctx, telegram.AlbumClaim{Owner: string(rune('a' + r)), Lease: time.Minute, Limit: 3})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				for _, a := range albums {
					got[a.Chat]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if len(got) != 20 {
		t.Errorf("%d albums claimed, want 20", len(got))
	}
	for chat, n := range got {
		if n != 1 {
			t.Errorf("album of chat %d claimed %d times", chat, n)
		}
	}
}

// Pruning forgets albums handed over before the cutoff only.
func TestAlbumsPruned(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	addPart(t, db, 7, "g", 1)
	albums, _ := claim(t, db, telegram.AlbumClaim{Owner: "a"})
	if err := db.FinishAlbum(ctx, "a", albums[0]); err != nil {
		t.Fatal(err)
	}
	addPart(t, db, 8, "open", 2)
	if err := db.PruneAlbums(ctx, time.Now().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	var albumsLeft, partsLeft int
	if err := db.Pool().QueryRow(ctx, `SELECT (SELECT count(*) FROM telegram_albums), (SELECT count(*) FROM telegram_album_parts)`).
		Scan(&albumsLeft, &partsLeft); err != nil {
		t.Fatal(err)
	}
	if albumsLeft != 1 || partsLeft != 1 {
		t.Fatalf("%d albums and %d parts left, want the open album and its part", albumsLeft, partsLeft)
	}
}
