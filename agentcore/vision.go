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

// withImages returns msgs as a model call is given them: with vision, the
// images of the newest user messages, up to maxImagesPerCall, carry their
// bytes, loaded now (never kept across calls: a window of pictures would
// stay in memory for as long as the session is busy); each older one
// becomes a note that it is not shown again, and one that cannot be loaded
// (pruned after media.keep, a store that is down) a note that it could not
// be read, instead of failing the run. Which images go depends only on
// their place in the window, so the same window always shows the same
// ones. Without vision no image goes along: the attachment lines in
// Content already name them. msgs itself is not changed.
func (a *Agent) withImages(ctx context.Context, log *slog.Logger, msgs []Message) []Message {
	budget := imageBudget{maxImages: maxImagesPerCall}
	return newestFirst(msgs, func(m *Message) {
		if !a.Vision {
			m.Images = nil
			return
		}
		*m = a.loadImages(ctx, log, *m, &budget)
	})
}

// loadImages returns m with the bytes of each of its images that budget
// still takes. One left out or that cannot be loaded keeps no bytes
// (providers skip it) and gets a note; it stays in the list so every image
// keeps its place, which names it.
func (a *Agent) loadImages(ctx context.Context, log *slog.Logger, m Message, budget *imageBudget) Message {
	images := make([]Image, len(m.Images))
	var notes []string
	for i, im := range m.Images {
		images[i] = Image{SHA256: im.SHA256, Type: im.Type}
		if budget.full() {
			notes = append(notes, notShownAgain(m, i))
			continue
		}
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
		budget.take(len(data))
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
