package main

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/media"
	"github.com/switchboard-chat/switchboard/bot/retention"
	"github.com/switchboard-chat/switchboard/tools/exec"
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

// removeInbox deletes the attachments put in session's workspace on this
// replica's disk (for /forget); without a workspace root there are none.
func (d *daemon) removeInbox(session string) error {
	if d.workspaces.Root == "" {
		return nil
	}
	root, err := filepath.Abs(d.workspaces.Root)
	if err != nil {
		return fmt.Errorf("workspace root: %w", err)
	}
	return media.RemoveInbox(exec.WorkspaceDir(root, session))
}

// prunings are the hourly passes of retention: attachments, messages and
// the audit log, each on the one replica that takes its lock, none for a
// period of 0 (keep).
func (d *daemon) prunings() []bot.Pruning {
	out := retention.Prunings(retention.PruneOptions{Store: d.st.db, Messages: d.cfg.Retention.Messages,
		Audit: d.cfg.Retention.Audit, Logger: d.log})
	if d.cfg.Retention.Media > 0 {
		out = append(out, d.mediaPruning())
	}
	return out
}

// mediaPruning deletes the attachments stored (or sent) longer than
// retention.media ago (media.keep in older files; config.Load settles
// which).
func (d *daemon) mediaPruning() bot.Pruning {
	db := d.st.db
	return bot.Pruning{What: "media", Lock: mediaPruneLock, Keep: d.cfg.Retention.Media, Every: bot.PruneEvery, Store: db,
		Prune: func(ctx context.Context, keep time.Duration, _ int) (int, error) {
			return db.PruneMedia(ctx, time.Now().Add(-keep))
		}, Log: d.log}
}
