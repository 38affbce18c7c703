package main

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/media"
)

// mediaPruneLock is the leadership of the replica that prunes media.
const mediaPruneLock = "media:prune"

// mediaReceiver takes in the attachments of messages: downloaded into
// PostgreSQL up to media.max_bytes and put in the workspace the
// conversation's tools use, owned by exec's user. Voice is
// transcribed when media.transcription is set.
func (d *daemon) mediaReceiver() *media.Receiver {
	r := &media.Receiver{Store: d.st.db, MaxBytes: d.cfg.Media.MaxBytes, Transcriber: d.models.transcriber, Log: d.log}
	if u := d.workspaces.RunAs; u != nil {
		// exec runs as u in the workspace: the files must be its to work on.
		r.Owner = &media.FileOwner{UID: int(u.UID), GID: int(u.GID)}
	}
	return r
}

// mediaPruning deletes the attachments stored (or sent) longer than
// media.keep ago, hourly, on the one replica that takes its lock.
func (d *daemon) mediaPruning() bot.Pruning {
	db := d.st.db
	return bot.Pruning{What: "media", Lock: mediaPruneLock, Keep: d.cfg.Media.Keep, Every: bot.PruneEvery, Store: db,
		Prune: func(ctx context.Context, keep time.Duration, _ int) (int, error) {
			return db.PruneMedia(ctx, time.Now().Add(-keep))
		}, Log: d.log}
}
