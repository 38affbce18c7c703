package agentcore

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
)

// ImageLoader reads the stored pictures user messages refer to
// (Message.Images). The daemon adapts its media store to it.
type ImageLoader interface {
	// LoadImage returns the MIME type and bytes of the picture stored
	// under sha256 (its hex SHA-256).
	LoadImage(ctx context.Context, sha256 string) (typ string, data []byte, err error)
}

// withImages returns msgs as a model call is given them: with vision, each
// image of a user message carries its bytes, loaded now (never kept across
// calls: a window of pictures would stay in memory for as long as the
// session is busy); one that cannot be loaded (pruned after media.keep, a
// store that is down) becomes a note in the message's text instead of
// failing the run. Without vision no image goes along: the attachment
// lines in Content already name them. msgs itself is not changed.
func (a *Agent) withImages(ctx context.Context, log *slog.Logger, msgs []Message) []Message {
	var out []Message
	for i := range msgs {
		if msgs[i].Role != RoleUser || len(msgs[i].Images) == 0 {
			continue
		}
		if out == nil {
			out = append([]Message(nil), msgs...)
		}
		if !a.Vision {
			out[i].Images = nil
			continue
		}
		out[i] = a.loadImages(ctx, log, out[i])
	}
	if out == nil {
		return msgs
	}
	return out
}

// loadImages returns m with the bytes of each of its images. One that
// cannot be loaded keeps no bytes (providers skip it) and gets a note; it
// stays in the list so every image keeps its place, which names it.
func (a *Agent) loadImages(ctx context.Context, log *slog.Logger, m Message) Message {
	images := make([]Image, len(m.Images))
	var notes []string
	for i, im := range m.Images {
		images[i] = Image{SHA256: im.SHA256, Type: im.Type}
		if a.Images == nil {
			notes = append(notes, unreadableImage(m, i))
			continue
		}
		typ, data, err := a.Images.LoadImage(ctx, im.SHA256)
		if err != nil || len(data) == 0 {
			log.Warn("image of a user message not loaded; the model is told it could not be read",
				"sha256", im.SHA256, "err", err)
			notes = append(notes, unreadableImage(m, i))
			continue
		}
		if typ != "" {
			images[i].Type = typ
		}
		images[i].Data = data
	}
	m.Images = images
	m.Content = withNotes(m.Content, notes)
	return m
}

// unreadableImage is the note the model reads for the i-th image of m
// when that image cannot be shown to it.
func unreadableImage(m Message, i int) string {
	return "[image " + imageLabel(m, i) + " could not be read]"
}

// withNotes appends notes to text, one a line.
func withNotes(text string, notes []string) string {
	if len(notes) == 0 {
		return text
	}
	if text == "" {
		return strings.Join(notes, "\n")
	}
	return text + "\n" + strings.Join(notes, "\n")
}

// attachmentPrefix opens the line the bot writes for each attachment of a
// message ("[attachment: inbox/x.png, image/png, 12 KB]"), one per image
// in the order of Message.Images.
const attachmentPrefix = "[attachment: "

// imageLabel names the i-th image of m for the model: its workspace path
// from the message's attachment lines when those name exactly its images,
// else its place in the message.
func imageLabel(m Message, i int) string {
	var paths []string
	for _, line := range strings.Split(m.Content, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), attachmentPrefix)
		if !ok {
			continue
		}
		fields := strings.Split(strings.TrimSuffix(rest, "]"), ", ")
		if len(fields) >= 2 && strings.HasPrefix(fields[len(fields)-2], "image/") {
			paths = append(paths, strings.Join(fields[:len(fields)-2], ", "))
		}
	}
	if len(paths) == len(m.Images) && i < len(paths) {
		return paths[i]
	}
	return fmt.Sprintf("%d of this message", i+1)
}
