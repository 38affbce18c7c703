package telegram

import (
	"context"
	"slices"

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
		c.handle(ctx, ids, func(h channels.Handler) error {
			in, ok := c.albumInbound(al.updates())
			if !ok {
				return nil
			}
			return h(ctx, in)
		})
	})
}

// albumInbound is the parts of an album as one Inbound: the first part's
// ids, every part's files in order, and the caption whichever part has
// it; ok is false when the parts carry nothing to hand over, or when none
// of them is meant for the bot (see addressed).
func (c *Channel) albumInbound(parts []*models.Update) (in channels.Inbound, ok bool) {
	if !slices.ContainsFunc(parts, func(u *models.Update) bool { return c.addressed(u.Message) }) {
		if len(parts) > 0 {
			c.log.Debug("telegram group album not meant for the bot ignored", "update_id", parts[0].ID)
		}
		return channels.Inbound{}, false
	}
	for i, u := range parts {
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
	return in, in.Text != "" || len(in.Attachments) > 0
}
