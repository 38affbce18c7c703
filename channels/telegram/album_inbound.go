package telegram

import (
	"context"

	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
)

// queueAlbum is a polled album's onClose: it queues the album on its
// chat's lane, or, when Start is stopping, leaves its parts unconfirmed.
func (c *Channel) queueAlbum(ctx context.Context, al *album, handOver bool) {
	ids := make([]int64, 0, len(al.parts))
	for _, u := range al.parts {
		ids = append(ids, u.ID)
		if handOver {
			c.inflight.unpark(u.ID)
		} else {
			c.inflight.done(u.ID, false)
		}
	}
	if !handOver {
		return
	}
	c.lanes.submit(al.key.chat, func() {
		var err error = errStopped
		defer func() { c.albums.finish(al, err) }()
		c.handle(ctx, ids, func(h channels.Handler) error {
			err = c.deliverAlbum(ctx, h, al)
			return err
		})
	})
}

// webhookAlbumPart adds u, a part posted to the webhook, to its album
// and returns the outcome of handling the album, for u's request to answer
// with. runCtx is Start's; ctx the request's.
func (c *Channel) webhookAlbumPart(ctx, runCtx context.Context, h channels.Handler, key albumKey, u *models.Update) error {
	if c.albums.wasHandedOver(u.ID) {
		return nil // posted again after its album was handled
	}
	al := c.albums.add(runCtx, key, u, func(al *album, handOver bool) {
		if !handOver {
			return
		}
		c.albums.goDeliver(func() {
			dctx, cancel := context.WithTimeout(runCtx, c.webhookWait())
			defer cancel()
			c.albums.finish(al, c.deliverAlbum(dctx, h, al))
		})
	})
	select {
	case <-al.done:
		return al.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deliverAlbum hands the album to h as one Inbound: the first part's ids,
// every part's files in order, and the caption whichever part has it.
func (c *Channel) deliverAlbum(ctx context.Context, h channels.Handler, al *album) error {
	var in channels.Inbound
	for i, u := range al.updates() {
		part := c.messageInbound(u.ID, u.Message)
		if i == 0 {
			in = part
			continue
		}
		if in.Text == "" {
			in.Text = part.Text
		}
		in.Attachments = append(in.Attachments, part.Attachments...)
	}
	if in.Text == "" && len(in.Attachments) == 0 {
		return nil
	}
	return h(ctx, in)
}
