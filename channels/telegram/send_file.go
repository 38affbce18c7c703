package telegram

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/channels/markup"
)

// The Bot API's limits on what a bot uploads.
const (
	maxPhotoBytes = 10 << 20 // sendPhoto
	maxFileBytes  = 50 << 20 // sendVoice, sendDocument
	maxCaption    = 1024     // UTF-16 code units of a caption
)

// outgoing is where a message goes and what comes with it.
type outgoing struct {
	chatID   any
	thread   int
	replyTo  int
	keyboard *models.InlineKeyboardMarkup
	caption  string // Telegram HTML, or plain text when plain
	plain    bool
}

// sendFile sends msg.File as a photo, a voice message or a document, with
// msg.Text as its caption; a text too long for a caption follows as a
// text message instead. go-telegram/bot streams an upload through a pipe
// into its multipart form, so the file is read from File.Open as it is
// sent, never held whole; each attempt (after a 429) opens it again. It
// returns the id of the last message sent.
func (c *Channel) sendFile(ctx context.Context, msg channels.Outbound, fs outgoing) (string, error) {
	f := msg.File
	limit := int64(maxFileBytes)
	if f.Kind == channels.KindPhoto {
		limit = maxPhotoBytes
	}
	if f.Size > limit {
		return "", &channels.FileTooLargeError{Platform: Platform, Name: f.Name, Size: f.Size, Limit: limit}
	}
	if f.Open == nil {
		return "", fmt.Errorf("telegram: send %s to %s: the file has no content: %w", f.Name, msg.To, channels.ErrPermanent)
	}
	var follow string // the text, when too long for a caption
	if parts := markup.TelegramHTML(msg.Text, maxCaption); len(parts) == 1 {
		fs.caption = parts[0]
	} else if len(parts) > 1 {
		follow = msg.Text
	}
	m, err := c.upload(ctx, f, limit, fs)
	if isCantParse(err) {
		c.log.Warn("telegram refused our HTML caption; sending it as plain text", "error", c.redact(err))
		fs.caption, fs.plain = markup.TelegramText(fs.caption), true
		m, err = c.upload(ctx, f, limit, fs)
	}
	if err != nil {
		return "", fmt.Errorf("telegram: send %s to %s: %w", f.Name, msg.To, c.classify(err))
	}
	if follow == "" {
		return strconv.Itoa(m.ID), nil
	}
	id, err := c.sendText(ctx, msg.To, outgoing{chatID: fs.chatID, thread: fs.thread}, follow)
	if err != nil {
		return "", fmt.Errorf("telegram: the caption of %s, sent after it: %w", f.Name, err)
	}
	return id, nil
}

// upload sends f once, waiting out 429 answers; every attempt streams the
// file from a fresh Open.
func (c *Channel) upload(ctx context.Context, f *channels.File, limit int64, fs outgoing) (*models.Message, error) {
	var m *models.Message
	err := c.retry(ctx, chatKey(fs.chatID), func(ctx context.Context) error {
		rc, err := f.Open(ctx)
		if err != nil {
			return fmt.Errorf("open %s: %w", f.Name, err)
		}
		body := &guardedReader{r: io.LimitReader(rc, limit+1), limit: limit, name: f.Name}
		defer func() { _ = body.close(rc) }()
		m, err = c.uploadOnce(ctx, f, fs, &models.InputFileUpload{Filename: f.Name, Data: body})
		if tooLarge := body.over(); tooLarge != nil {
			return tooLarge
		}
		return err
	})
	return m, err
}

// uploadOnce calls the Bot API method for f's kind.
func (c *Channel) uploadOnce(ctx context.Context, f *channels.File, fs outgoing, up *models.InputFileUpload) (*models.Message, error) {
	parse := models.ParseModeHTML
	if fs.plain || fs.caption == "" {
		parse = ""
	}
	var reply *models.ReplyParameters
	if fs.replyTo != 0 {
		reply = &models.ReplyParameters{MessageID: fs.replyTo, AllowSendingWithoutReply: true}
	}
	var markup models.ReplyMarkup
	if fs.keyboard != nil {
		markup = fs.keyboard
	}
	switch f.Kind {
	case channels.KindPhoto:
		return c.uploads.SendPhoto(ctx, &bot.SendPhotoParams{ChatID: fs.chatID, MessageThreadID: fs.thread, Photo: up,
			Caption: fs.caption, ParseMode: parse, ReplyParameters: reply, ReplyMarkup: markup})
	case channels.KindVoice:
		return c.uploads.SendVoice(ctx, &bot.SendVoiceParams{ChatID: fs.chatID, MessageThreadID: fs.thread, Voice: up,
			Caption: fs.caption, ParseMode: parse, ReplyParameters: reply, ReplyMarkup: markup})
	}
	return c.uploads.SendDocument(ctx, &bot.SendDocumentParams{ChatID: fs.chatID, MessageThreadID: fs.thread, Document: up,
		Caption: fs.caption, ParseMode: parse, ReplyParameters: reply, ReplyMarkup: markup})
}

// guardedReader is an upload's content. The library reads it on a
// goroutine of its own that may still be in a Read when the call returns,
// so closing waits for that Read; and a file longer than its declared
// limit ends the upload rather than being sent.
type guardedReader struct {
	mu     sync.Mutex
	r      io.Reader
	n      int64
	limit  int64
	name   string
	closed bool
}

var errUploadClosed = errors.New("upload ended")

func (g *guardedReader) Read(p []byte) (int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return 0, errUploadClosed
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	if g.n > g.limit {
		return n, g.overLocked()
	}
	return n, err
}

// over returns a *channels.FileTooLargeError once more than limit bytes
// were read.
func (g *guardedReader) over() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.n > g.limit {
		return g.overLocked()
	}
	return nil
}

func (g *guardedReader) overLocked() error {
	return &channels.FileTooLargeError{Platform: Platform, Name: g.name, Size: g.n, Limit: g.limit}
}

// close closes rc once no Read is in progress.
func (g *guardedReader) close(rc io.Closer) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
	return rc.Close()
}
