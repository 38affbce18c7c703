package postgres

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/media"
)

var _ media.Store = (*DB)(nil)

// PutMedia streams body into a new large object and records it under the
// hash seal reports, in one transaction: a body that fails part way rolls
// the large object back with it. When the hash is stored already the new
// large object is unlinked and the row only gets a fresh created_at, so
// the same file twice is kept once and for as long as it is still sent.
func (db *DB) PutMedia(ctx context.Context, body io.Reader, seal func() media.Stored) error {
	return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		los := tx.LargeObjects()
		oid, err := los.Create(ctx, 0)
		if err != nil {
			return fmt.Errorf("create large object: %w", err)
		}
		lo, err := los.Open(ctx, oid, pgx.LargeObjectModeWrite)
		if err != nil {
			return fmt.Errorf("open large object: %w", err)
		}
		if _, err := io.Copy(lo, body); err != nil {
			return err
		}
		if err := lo.Close(); err != nil {
			return fmt.Errorf("close large object: %w", err)
		}
		s := seal()
		var kept uint32
		err = tx.QueryRow(ctx, `
			INSERT INTO media (sha256, oid, type, size) VALUES ($1, $2, $3, $4)
			ON CONFLICT (sha256) DO UPDATE SET created_at = now()
			RETURNING oid`, s.SHA256, oid, s.Type, s.Size).Scan(&kept)
		if err != nil {
			return fmt.Errorf("record media: %w", err)
		}
		if s.Chat != "" {
			if _, err := tx.Exec(ctx, `INSERT INTO media_chats (sha256, chat) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
				s.SHA256, storable(s.Chat)); err != nil {
				return fmt.Errorf("link media to its chat: %w", err)
			}
		}
		if kept != oid {
			return los.Unlink(ctx, oid)
		}
		return nil
	})
}

// OpenMedia streams back the content stored under sha. The reader holds a
// transaction (a large object is read inside one) and its connection until
// it is closed.
func (db *DB) OpenMedia(ctx context.Context, sha string) (io.ReadCloser, media.Stored, error) {
	tx, err := db.pool.Begin(ctx)
	if err != nil {
		return nil, media.Stored{}, err
	}
	s := media.Stored{SHA256: sha}
	var oid uint32
	err = tx.QueryRow(ctx, `SELECT oid, type, size FROM media WHERE sha256 = $1`, sha).Scan(&oid, &s.Type, &s.Size)
	if err == nil {
		los := tx.LargeObjects()
		var lo *pgx.LargeObject
		if lo, err = los.Open(ctx, oid, pgx.LargeObjectModeRead); err == nil {
			return &mediaReader{lo: lo, tx: tx}, s, nil
		}
	}
	_ = tx.Rollback(ctx)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, media.Stored{}, fmt.Errorf("media %s: %w", sha, bot.ErrNotFound)
	}
	return nil, media.Stored{}, fmt.Errorf("open media %s: %w", sha, err)
}

// mediaReader reads one large object and ends its transaction on Close.
type mediaReader struct {
	lo *pgx.LargeObject
	tx pgx.Tx
}

// Read reads the large object.
func (r *mediaReader) Read(p []byte) (int, error) { return r.lo.Read(p) }

// Close ends the read-only transaction, which also closes the large object.
func (r *mediaReader) Close() error {
	// The caller's context may be done by now; the rollback must still
	// reach the server or the connection goes back to the pool mid-transaction.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return r.tx.Rollback(ctx)
}

// mediaPruneLimit is how many attachments one pruning statement deletes:
// each unlinks a large object, so a statement stays short.
const mediaPruneLimit = 1000

// PruneMedia deletes the attachments stored (or last sent again) before
// olderThan, oldest first, mediaPruneLimit per statement; the table's
// trigger unlinks their large objects.
func (db *DB) PruneMedia(ctx context.Context, olderThan time.Time) (int, error) {
	return pagedDelete(ctx, db, "media", `DELETE FROM media WHERE sha256 IN (
		SELECT sha256 FROM media WHERE created_at < $1 ORDER BY created_at LIMIT $2)`, olderThan, mediaPruneLimit)
}
