package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/channels/telegram"
)

var _ telegram.AlbumStore = (*DB)(nil)

// AddAlbumPart stores a part of a webhook album. Only a part not stored
// before moves its album's quiet time on, and reopens an album handed
// over already (the part came late and is a message of its own).
func (db *DB) AddAlbumPart(ctx context.Context, p telegram.AlbumPart) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// The album row first: the part's foreign key needs it.
		if _, err := tx.Exec(ctx, `
			INSERT INTO telegram_albums (chat_id, media_group) VALUES ($1, $2)
			ON CONFLICT (chat_id, media_group) DO NOTHING`, p.Chat, p.Group); err != nil {
			return fmt.Errorf("record album: %w", err)
		}
		tag, err := tx.Exec(ctx, `
			INSERT INTO telegram_album_parts (chat_id, media_group, update_id, body) VALUES ($1, $2, $3, $4)
			ON CONFLICT DO NOTHING`, p.Chat, p.Group, p.UpdateID, p.Update)
		if err != nil {
			return fmt.Errorf("record album part: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return nil // posted again
		}
		if _, err := tx.Exec(ctx, `
			UPDATE telegram_albums SET last_part_at = now(), handed_at = NULL
			WHERE chat_id = $1 AND media_group = $2`, p.Chat, p.Group); err != nil {
			return fmt.Errorf("record album part: %w", err)
		}
		return nil
	})
}

// ClaimAlbums claims the due albums q asks for, skipping those another
// claim is taking at the same moment, and reports when the next one is
// due.
func (db *DB) ClaimAlbums(ctx context.Context, q telegram.AlbumClaim) ([]telegram.StoredAlbum, time.Duration, error) {
	var albums []telegram.StoredAlbum
	var next time.Duration
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `
			WITH due AS (
				SELECT chat_id, media_group FROM telegram_albums
				WHERE handed_at IS NULL AND (claimed_until IS NULL OR claimed_until <= now())
				  AND CASE WHEN $4::bigint = 0 THEN last_part_at <= now() - $2::float8 * interval '1 microsecond' ELSE chat_id = $4 END
				ORDER BY last_part_at
				LIMIT $5
				FOR UPDATE SKIP LOCKED)
			UPDATE telegram_albums a SET claimed_by = $1, claimed_until = now() + $3::float8 * interval '1 microsecond'
			FROM due WHERE a.chat_id = due.chat_id AND a.media_group = due.media_group
			RETURNING a.chat_id, a.media_group`, q.Owner, float64(q.Quiet.Microseconds()), float64(q.Lease.Microseconds()), q.Chat, max(q.Limit, 1))
		if err != nil {
			return fmt.Errorf("claim albums: %w", err)
		}
		keys, err := pgx.CollectRows(rows, pgx.RowToStructByPos[albumKey])
		if err != nil {
			return fmt.Errorf("claim albums: %w", err)
		}
		for _, k := range keys {
			a, err := albumParts(ctx, tx, k)
			if err != nil {
				return err
			}
			albums = append(albums, a)
		}
		if q.Chat != 0 {
			return nil // a chat's flush, on every webhook update: no sweep waits for next
		}
		next, err = nextAlbumDue(ctx, tx, q.Quiet)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	return albums, next, nil
}

// albumKey names an album in the tables.
type albumKey struct {
	Chat  int64
	Group string
}

// albumParts reads the parts of album k not handed over yet.
func albumParts(ctx context.Context, tx pgx.Tx, k albumKey) (telegram.StoredAlbum, error) {
	a := telegram.StoredAlbum{Chat: k.Chat, Group: k.Group}
	rows, err := tx.Query(ctx, `
		SELECT update_id, body FROM telegram_album_parts
		WHERE chat_id = $1 AND media_group = $2 AND NOT handed
		ORDER BY update_id`, k.Chat, k.Group)
	if err != nil {
		return a, fmt.Errorf("read album parts: %w", err)
	}
	a.Parts, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (telegram.AlbumPart, error) {
		p := telegram.AlbumPart{Chat: k.Chat, Group: k.Group}
		return p, row.Scan(&p.UpdateID, &p.Update)
	})
	if err != nil {
		return a, fmt.Errorf("read album parts: %w", err)
	}
	return a, nil
}

// nextAlbumDue is how long until an open album not claimed now is due:
// quiet after its latest part and free of any lease; 0 when none is open.
func nextAlbumDue(ctx context.Context, tx pgx.Tx, quiet time.Duration) (time.Duration, error) {
	var due *float64 // seconds
	err := tx.QueryRow(ctx, `
		SELECT extract(epoch FROM min(greatest(last_part_at + $1::float8 * interval '1 microsecond',
			coalesce(claimed_until, '-infinity')) - now()))::float8
		FROM telegram_albums WHERE handed_at IS NULL`, float64(quiet.Microseconds())).Scan(&due)
	if err != nil {
		return 0, fmt.Errorf("next album due: %w", err)
	}
	if due == nil {
		return 0, nil
	}
	// An album due already (its claimer just released it) is looked at
	// again at once.
	return max(time.Duration(*due*float64(time.Second)), time.Millisecond), nil
}

// FinishAlbum marks the handed-over parts of a and, when no part came
// meanwhile, the album itself.
func (db *DB) FinishAlbum(ctx context.Context, owner string, a telegram.StoredAlbum) error {
	ids := make([]int64, 0, len(a.Parts))
	for _, p := range a.Parts {
		ids = append(ids, p.UpdateID)
	}
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			UPDATE telegram_album_parts SET handed = true
			WHERE chat_id = $1 AND media_group = $2 AND update_id = ANY($3)`, a.Chat, a.Group, ids); err != nil {
			return fmt.Errorf("finish album: %w", err)
		}
		_, err := tx.Exec(ctx, `
			UPDATE telegram_albums a SET claimed_by = NULL, claimed_until = NULL,
				handed_at = CASE WHEN EXISTS (SELECT 1 FROM telegram_album_parts p
					WHERE p.chat_id = a.chat_id AND p.media_group = a.media_group AND NOT p.handed)
				THEN NULL ELSE now() END
			WHERE chat_id = $1 AND media_group = $2 AND claimed_by = $3`, a.Chat, a.Group, owner)
		if err != nil {
			return fmt.Errorf("finish album: %w", err)
		}
		return nil
	})
}

// ReleaseAlbum lets a be claimed again after retryIn.
func (db *DB) ReleaseAlbum(ctx context.Context, owner string, a telegram.StoredAlbum, retryIn time.Duration) error {
	_, err := db.pool.Exec(ctx, `
		UPDATE telegram_albums SET claimed_by = NULL, claimed_until = now() + $4::float8 * interval '1 microsecond'
		WHERE chat_id = $1 AND media_group = $2 AND claimed_by = $3`, a.Chat, a.Group, owner, float64(retryIn.Microseconds()))
	if err != nil {
		return fmt.Errorf("release album: %w", err)
	}
	return nil
}

// PruneAlbums deletes albums handed over before cutoff, with their parts.
func (db *DB) PruneAlbums(ctx context.Context, cutoff time.Time) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM telegram_albums WHERE handed_at < $1`, cutoff); err != nil {
		return fmt.Errorf("prune albums: %w", err)
	}
	return nil
}
