package telegram

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
)

// Webhook albums. A part posted to the webhook is stored in the
// AlbumStore and answered 200: Telegram may post a chat's updates one at a
// time, waiting for each answer, so holding a part's request until its
// album is complete would split the album. Every replica sweeps the store
// for albums whose parts have been quiet for AlbumWait and hands each over
// as one Inbound on its chat's lane; a claim that is neither finished nor
// released (its replica died) lapses after albumLease and another replica
// hands the album over. A crash after the handler stored the message and
// before the claim was finished hands it over again with the same
// ExternalID, which the handler's dedupe keeps once.
const (
	// albumHandOver bounds one attempt to hand an album over: its files
	// are downloaded meanwhile.
	albumHandOver = 2 * time.Minute
	// albumLease is how long a claim on an album holds.
	albumLease = albumHandOver + 30*time.Second
	// albumSweep is how often a replica looks for albums nobody woke it
	// for: stored through another replica, or left by a dead one.
	albumSweep = 5 * time.Second
	// albumKeep is how long handed-over parts are remembered, so that one
	// Telegram posts again is not a new album; albumPrune how often they
	// are pruned.
	albumKeep  = 48 * time.Hour
	albumPrune = time.Hour
	// durableWrite bounds a store write that a stop must not cut short.
	durableWrite = 10 * time.Second
)

// storeAlbumPart stores u, a part of album key posted to the webhook, and
// wakes the sweep; the request is answered once this returns nil.
func (c *Channel) storeAlbumPart(ctx context.Context, key albumKey, u *models.Update) error {
	body, err := json.Marshal(u)
	if err != nil {
		return fmt.Errorf("encode album part: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), durableWrite)
	defer cancel()
	part := AlbumPart{Chat: key.chat, Group: key.group, UpdateID: u.ID, Update: body}
	if err := c.opts.Albums.AddAlbumPart(ctx, part); err != nil {
		return fmt.Errorf("store album part: %w", err)
	}
	select {
	case c.albumStored <- struct{}{}:
	default:
	}
	return nil
}

// sweepAlbums hands over the webhook albums that are due until ctx ends:
// AlbumWait after a part was stored here, when the store says the next
// one is due, and every albumSweep.
func (c *Channel) sweepAlbums(ctx context.Context, h channels.Handler) {
	t := time.NewTimer(0)
	defer t.Stop()
	due := time.Now()
	var pruned time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.albumStored:
			if at := time.Now().Add(c.opts.AlbumWait); at.Before(due) {
				due = at
				t.Reset(time.Until(due))
			}
			continue
		case <-t.C:
		}
		next := c.claimDueAlbums(ctx, h)
		if time.Since(pruned) > albumPrune {
			pruned = time.Now()
			c.pruneAlbums(ctx)
		}
		if next <= 0 || next > albumSweep {
			next = albumSweep
		}
		due = time.Now().Add(next)
		t.Reset(next)
	}
}

// claimDueAlbums claims the albums due and queues each on its chat's
// lane; it returns when to look again.
func (c *Channel) claimDueAlbums(ctx context.Context, h channels.Handler) time.Duration {
	albums, next, err := c.opts.Albums.ClaimAlbums(ctx, AlbumClaim{Owner: c.owner, Quiet: c.opts.AlbumWait,
		Lease: albumLease, Limit: c.opts.MaxParallelChats})
	if err != nil {
		if ctx.Err() == nil {
			c.log.Warn("telegram albums could not be read; trying again", "error", err, "retry_in", c.opts.RetryMin)
		}
		return c.opts.RetryMin
	}
	for _, a := range albums {
		c.lanes.submit(a.Chat, func() {
			if err := c.handOverAlbum(ctx, h, a); err != nil && ctx.Err() == nil {
				c.log.Info("telegram album not stored; it is handed over again", "chat", a.Chat, "error", err)
			}
		})
	}
	if len(albums) == c.opts.MaxParallelChats {
		return time.Millisecond // more may be due
	}
	return next
}

// handOverWebhookAlbums hands over, first, the albums of chat that are
// still collected: another update of the chat came and must not overtake
// them. An album another replica holds is left to it.
func (c *Channel) handOverWebhookAlbums(ctx context.Context, h channels.Handler, chat int64) error {
	albums, _, err := c.opts.Albums.ClaimAlbums(ctx, AlbumClaim{Owner: c.owner, Chat: chat, Lease: albumLease,
		Limit: maxAlbumParts})
	if err != nil {
		return fmt.Errorf("read the chat's albums: %w", err)
	}
	for _, a := range albums {
		if err := c.handOverAlbum(ctx, h, a); err != nil {
			return err
		}
	}
	return nil
}

// handOverAlbum hands the claimed album a to h as one Inbound and then
// finishes the claim, or releases it to be tried again after RetryMin.
func (c *Channel) handOverAlbum(ctx context.Context, h channels.Handler, a StoredAlbum) error {
	var err error
	if in, ok := c.albumInbound(c.decodeParts(a)); ok {
		hctx, cancel := context.WithTimeout(ctx, albumHandOver)
		err = h(hctx, in)
		cancel()
	}
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), durableWrite)
	defer cancel()
	if err != nil {
		if rerr := c.opts.Albums.ReleaseAlbum(dctx, c.owner, a, c.opts.RetryMin); rerr != nil {
			c.log.Warn("telegram album claim not released; it lapses", "chat", a.Chat, "error", rerr)
		}
		return err
	}
	if err := c.opts.Albums.FinishAlbum(dctx, c.owner, a); err != nil {
		// The message is stored; handed over again once the claim
		// lapses, it is a duplicate the handler drops.
		return fmt.Errorf("finish album: %w", err)
	}
	return nil
}

// decodeParts returns the stored parts of a as updates; a part that does
// not decode is logged and left out.
func (c *Channel) decodeParts(a StoredAlbum) []*models.Update {
	out := make([]*models.Update, 0, len(a.Parts))
	for _, p := range a.Parts {
		var u models.Update
		if err := json.Unmarshal(p.Update, &u); err != nil || u.Message == nil {
			c.log.Warn("telegram album part unreadable; left out", "update_id", p.UpdateID, "error", err)
			continue
		}
		out = append(out, &u)
	}
	return out
}

// pruneAlbums forgets the parts handed over more than albumKeep ago.
func (c *Channel) pruneAlbums(ctx context.Context) {
	if err := c.opts.Albums.PruneAlbums(ctx, time.Now().Add(-albumKeep)); err != nil && ctx.Err() == nil {
		c.log.Warn("telegram albums not pruned; trying again later", "error", err)
	}
}
