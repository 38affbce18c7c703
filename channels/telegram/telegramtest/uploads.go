package telegramtest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"slices"
	"strings"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// KeptUploadBytes is how much of an uploaded file an Upload keeps: all of
// a small file, the start of a large one (its size and SHA-256 are always
// recorded), so that a test of a large upload does not hold it in memory.
const KeptUploadBytes = 1 << 20

// Telegram's upload limits for bots: photos 10 MB, other files 50 MB.
const (
	maxPhotoUpload = 10 << 20
	maxFileUpload  = 50 << 20
	maxCaption     = 1024 // UTF-16 code units of the visible caption
)

// uploadField is the form field that carries each upload method's file.
var uploadField = map[string]string{"sendphoto": "photo", "sendvoice": "voice", "senddocument": "document"}

// Upload is a file the bot sent with sendPhoto, sendVoice or sendDocument,
// as the fake received it.
type Upload struct {
	Method    string // "sendPhoto", "sendVoice" or "sendDocument"
	MessageID int
	ChatID    int64
	ThreadID  int
	ReplyTo   int
	FileName  string // the multipart file name
	Size      int64  // bytes received
	SHA256    string // hex, of the bytes received
	Body      []byte // the first KeptUploadBytes bytes received
	Caption   string // as sent
	ParseMode string
	Buttons   [][]Button
}

// upload is a request's file as it was streamed in.
type upload struct {
	field, name string
	size        int64
	sum         string
	head        []byte
}

// Uploads returns the files the bot sent to chatID, oldest first.
func (s *Server) Uploads(chatID int64) []Upload {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Upload
	for _, u := range s.uploads {
		if u.ChatID == chatID {
			cp := u
			cp.Body = slices.Clone(u.Body)
			cp.Buttons = cloneButtons(u.Buttons)
			out = append(out, cp)
		}
	}
	return out
}

// parseUpload reads an upload method's multipart form as a stream: the
// fields into params, the file into its size, SHA-256 and first bytes.
// The file's read stops where st says (none when nil) until it is
// released, r ends or done is closed.
func parseUpload(r *http.Request, st *channeltest.Stall, done <-chan struct{}) (params, *upload, error) {
	p := params{}
	for k, v := range r.URL.Query() {
		p[k] = v[0]
	}
	mediaType, mp, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mediaType != "multipart/form-data" {
		return p, nil, nil // a file_id or URL instead of an upload: no file
	}
	mr := multipart.NewReader(r.Body, mp["boundary"])
	var up *upload
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			return p, up, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("parse multipart: %w", err)
		}
		if part.FileName() == "" {
			v, err := io.ReadAll(io.LimitReader(part, maxBody))
			if err != nil {
				return nil, nil, fmt.Errorf("read multipart field %q: %w", part.FormName(), err)
			}
			p[part.FormName()] = string(v)
			continue
		}
		h := sha256.New()
		head := &capped{max: KeptUploadBytes}
		n, err := io.Copy(io.MultiWriter(h, head), st.Reader(r.Context(), done, part))
		if err != nil {
			return nil, nil, fmt.Errorf("read uploaded file %q: %w", part.FormName(), err)
		}
		up = &upload{field: part.FormName(), name: part.FileName(), size: n, sum: hex.EncodeToString(h.Sum(nil)), head: head.b}
		p[part.FormName()] = "attach://" + part.FormName()
	}
}

// capped keeps the first max bytes written to it.
type capped struct {
	b   []byte
	max int
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// sendUpload serves sendPhoto, sendVoice and sendDocument with an uploaded
// file, validating the caption and the size as Telegram does.
func (s *Server) sendUpload(method string, p params, up *upload) (any, *apiError) {
	field := uploadField[method]
	if up == nil || up.field != field {
		return nil, badRequest("there is no " + field + " in the request")
	}
	limit := int64(maxFileUpload)
	if method == "sendphoto" {
		limit = maxPhotoUpload
	}
	if up.size > limit {
		return nil, &apiError{status: http.StatusRequestEntityTooLarge, desc: "Request Entity Too Large"}
	}
	if up.size == 0 {
		return nil, badRequest("file must be non-empty")
	}
	sc, err := parseSend(p, "caption", checkCaption)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, m, err := s.newBotMessageLocked(sc, p)
	if err != nil {
		return nil, err
	}
	m.File = field
	c.msgs = append(c.msgs, m)
	s.uploads = append(s.uploads, Upload{Method: "send" + strings.ToUpper(field[:1]) + field[1:], MessageID: m.ID,
		ChatID: m.ChatID, ThreadID: m.ThreadID, ReplyTo: m.ReplyTo, FileName: up.name, Size: up.size, SHA256: up.sum,
		Body: up.head, Caption: m.Text, ParseMode: m.ParseMode, Buttons: cloneButtons(m.Buttons)})
	s.notifyLocked()
	j := s.messageJSONLocked(c, m)
	delete(j, "text")
	if m.Visible != "" {
		j["caption"] = m.Visible
	}
	j[field] = map[string]any{"file_id": fmt.Sprintf("sent-%d", m.ID), "file_unique_id": fmt.Sprintf("usent-%d", m.ID), "file_size": up.size}
	if field == "photo" {
		j[field] = []any{j[field]}
	}
	return j, nil
}

// checkCaption validates a caption as Telegram does and returns what a
// reader sees; an empty caption is fine.
func checkCaption(caption, parseMode string) (string, *apiError) {
	if caption == "" {
		return "", nil
	}
	visible := caption
	if strings.EqualFold(parseMode, "html") {
		v, err := ParseHTML(caption)
		if err != nil {
			return "", badRequest("can't parse entities: " + err.Error())
		}
		visible = v
	}
	if utf16Len(visible) > maxCaption {
		return "", badRequest("message caption is too long")
	}
	return visible, nil
}
