package bot

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/switchboard-chat/switchboard/channels"
)

// errNoMediaStore: a row sends a file but the dispatcher has no OpenFile.
var errNoMediaStore = fmt.Errorf("no media store is configured to read the file from: %w", channels.ErrPermanent)

// outbound is what row m sends; its file, when it has one, is read from
// the media store only as the adapter sends it.
func (d *Dispatcher) outbound(m OutboxMessage) channels.Outbound {
	out := channels.Outbound{To: m.To, Text: m.Text, Buttons: m.Buttons, ReplyTo: m.ReplyTo, Key: outboxKey(m.Row()), Replaces: m.Replaces}
	if f := m.File; f != nil {
		sha, open := f.SHA256, d.o.OpenFile
		out.File = &channels.File{Kind: f.Kind, Name: f.Name, Type: f.Type, Size: f.Size,
			Open: func(ctx context.Context) (io.ReadCloser, error) {
				if open == nil {
					return nil, errNoMediaStore
				}
				return open(ctx, sha)
			}}
	}
	return out
}

// send delivers row m through ch: in place of the live messages that
// showed it while it was written, when it has them. A file the platform does not take, this
// large, is never dropped silently: the chat is told so in its place
// (with the caption), and that message is the row's delivery.
func (d *Dispatcher) send(ctx context.Context, ch channels.Channel, m OutboxMessage) (string, error) {
	if live, ok := ch.(channels.LiveAnswerer); ok && len(m.Replaces) > 0 && m.File == nil {
		return live.FinishLive(ctx, d.outbound(m))
	}
	id, err := ch.Send(ctx, d.outbound(m))
	var big *channels.FileTooLargeError
	if m.File == nil || !errors.As(err, &big) {
		return id, err
	}
	d.o.Logger.Info("file too large for the platform; telling the chat instead", "outbox_id", m.ID, "to", m.To.String(),
		"size", m.File.Size, "limit", big.Limit)
	told := m
	told.File = nil
	told.Text = tooLargeText(m.Text, *m.File, big)
	return ch.Send(ctx, d.outbound(told))
}

// tooLargeText tells the chat that file, sent with caption, was too large
// for the platform: "I made report.pdf (60 MB) but Telegram takes files up
// to 50 MB."
func tooLargeText(caption string, file OutboxFile, big *channels.FileTooLargeError) string {
	text := fmt.Sprintf("I made %s (%s) but %s takes files up to %s.", file.Name, HumanSize(file.Size),
		platformName(big.Platform), HumanSize(big.Limit))
	if strings.TrimSpace(caption) == "" {
		return text
	}
	return caption + "\n\n" + text
}

// platformName is how people write a platform's name.
func platformName(platform string) string {
	switch platform {
	case "telegram":
		return "Telegram"
	case "slack":
		return "Slack"
	case "discord":
		return "Discord"
	}
	return platform
}
