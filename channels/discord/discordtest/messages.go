package discordtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Message is a message as the server holds it.
type Message struct {
	ID        string
	ChannelID string
	GuildID   string
	AuthorID  string
	Content   string
	ReplyTo   string     // id of the message this one replies to
	Buttons   [][]Button // action rows
	// AllowedMentions is what the sender asked for; nil when it sent none
	// (then Discord would parse every mention in Content).
	AllowedMentions *AllowedMentions
	Multipart       bool // sent as multipart/form-data
	// ContentLength is the request's declared body length; -1 when it
	// was sent chunked, without one.
	ContentLength int64
	// Files are the files the message carries, as the bot uploaded them.
	Files   []File
	Nonce   string // the nonce it was created with, if any
	Edits   int
	Created time.Time
	// History is every edit of the message, oldest first, each with the
	// text it left; Content is what a person sees now.
	History []Edit
}

// Edit is one edit of a message: when it happened and the text it left.
type Edit struct {
	At      time.Time
	Content string
}

// Message returns the message id as it is now (edits applied), and
// whether it exists (it was not deleted).
func (s *Server) Message(id string) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.messages[id]
	if !ok {
		return Message{}, false
	}
	return m.clone(), true
}

// clone copies m so that the caller shares nothing with the server.
func (m *message) clone() Message {
	c := m.Message
	c.Buttons = cloneRows(m.Buttons)
	c.Files = append([]File(nil), m.Files...)
	c.History = append([]Edit(nil), m.History...)
	return c
}

// Button is one button of an action row.
type Button struct {
	Label    string
	Style    int
	CustomID string
	Disabled bool
}

// AllowedMentions is a message's allowed_mentions.
type AllowedMentions struct {
	Parse       []string `json:"parse"`
	Users       []string `json:"users"`
	Roles       []string `json:"roles"`
	RepliedUser bool     `json:"replied_user"`
}

// NoneAllowed reports whether the message can mention nobody but the
// author of the message it replies to.
func (a *AllowedMentions) NoneAllowed() bool {
	return a != nil && len(a.Parse) == 0 && len(a.Users) == 0 && len(a.Roles) == 0
}

// message is a stored message.
type message struct {
	Message
	typ   int
	flags int
}

// Messages returns the messages the bot posted in channelID, oldest first,
// as they are now (edits applied).
func (s *Server) Messages(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messagesLocked(channelID)
}

func (s *Server) messagesLocked(channelID string) []Message {
	var out []Message
	for _, id := range s.order {
		m := s.messages[id]
		if m.ChannelID == channelID && m.AuthorID == BotID {
			out = append(out, m.clone())
		}
	}
	return out
}

// WaitMessages waits until the bot has posted at least n messages in
// channelID and returns them.
func (s *Server) WaitMessages(ctx context.Context, channelID string, n int) ([]Message, error) {
	var out []Message
	err := s.waitFor(ctx, func() bool {
		out = s.messagesLocked(channelID)
		return len(out) >= n
	})
	if err != nil {
		return nil, fmt.Errorf("discordtest: %d of %d messages in %s: %w", len(out), n, channelID, err)
	}
	return out, nil
}

func cloneRows(rows [][]Button) [][]Button {
	if rows == nil {
		return nil
	}
	out := make([][]Button, len(rows))
	for i, r := range rows {
		out[i] = append([]Button(nil), r...)
	}
	return out
}

// messageBody is the JSON of a create or edit request.
type messageBody struct {
	Content         *string          `json:"content"`
	Components      *json.RawMessage `json:"components"`
	AllowedMentions *AllowedMentions `json:"allowed_mentions"`
	Reference       *struct {
		MessageID       string `json:"message_id"`
		FailIfNotExists *bool  `json:"fail_if_not_exists"`
	} `json:"message_reference"`
	Flags        int             `json:"flags"`
	Nonce        json.RawMessage `json:"nonce"`
	EnforceNonce bool            `json:"enforce_nonce"`
}

// MaxNonce is the longest nonce Discord accepts.
const MaxNonce = 25

// nonce decodes the body's nonce (a string or an integer).
func (b messageBody) nonce() (string, *formError) {
	if len(b.Nonce) == 0 || string(b.Nonce) == "null" {
		return "", nil
	}
	var n string
	if err := json.Unmarshal(b.Nonce, &n); err != nil {
		var i json.Number
		if err := json.Unmarshal(b.Nonce, &i); err != nil {
			return "", &formError{"nonce", "MODEL_TYPE_CONVERT", "Could not interpret nonce as a string or integer."}
		}
		n = i.String()
	}
	if utf8.RuneCountInString(n) > MaxNonce {
		return "", &formError{"nonce", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxNonce)}
	}
	return n, nil
}

// nonceWindow is how long enforce_nonce finds an earlier message (Discord:
// "a few minutes").
const nonceWindow = 2 * time.Minute

// byNonceLocked returns the bot's message created in channelID with nonce
// within nonceWindow, or nil.
func (s *Server) byNonceLocked(channelID, nonce string) *message {
	for i := len(s.order) - 1; i >= 0; i-- {
		m := s.messages[s.order[i]]
		if m != nil && m.ChannelID == channelID && m.AuthorID == BotID && m.Nonce == nonce && time.Since(m.Created) < nonceWindow {
			return m
		}
	}
	return nil
}

// readBody decodes a JSON or multipart (payload_json) request body; of a
// multipart body it also returns the uploaded files.
func readBody(r *http.Request) (messageBody, bool, []File, error) {
	var body messageBody
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "multipart/form-data" {
		if err := r.ParseMultipartForm(8 << 20); err != nil {
			return body, true, nil, err
		}
		defer func() { _ = r.MultipartForm.RemoveAll() }()
		files, uerr := uploadedFiles(r.MultipartForm)
		if uerr != nil {
			return body, true, nil, uerr
		}
		payload := r.FormValue("payload_json")
		if payload == "" {
			return body, true, files, nil
		}
		return body, true, files, json.Unmarshal([]byte(payload), &body)
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return body, false, nil, err
	}
	if len(data) == 0 {
		return body, false, nil, nil
	}
	return body, false, nil, json.Unmarshal(data, &body)
}

// writeBodyError answers a body readBody could not take: a refused upload
// as Discord refuses it, anything else as invalid JSON.
func writeBodyError(w http.ResponseWriter, err error) {
	var uerr *uploadError
	if errors.As(err, &uerr) {
		writeError(w, uerr.status, uerr.code, uerr.msg)
		return
	}
	writeError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
}

// formError is a validation failure: the field and Discord's error text.
type formError struct{ field, code, msg string }

// checkContent validates message content.
func checkContent(content string) *formError {
	if n := utf8.RuneCountInString(content); n > MaxContent {
		return &formError{"content", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxContent)}
	}
	return nil
}

// parseRows validates and decodes components: action rows of buttons.
func parseRows(raw json.RawMessage) ([][]Button, *formError) {
	var rows []struct {
		Type       int `json:"type"`
		Components []struct {
			Type     int    `json:"type"`
			Style    int    `json:"style"`
			Label    string `json:"label"`
			CustomID string `json:"custom_id"`
			URL      string `json:"url"`
			Disabled bool   `json:"disabled"`
		} `json:"components"`
	}
	if string(raw) == "null" {
		return nil, nil
	}
	if err := json.Unmarshal(raw, &rows); err != nil {
		return nil, &formError{"components", "MODEL_TYPE_CONVERT", "Could not interpret components as an array."}
	}
	if len(rows) > MaxRows {
		return nil, &formError{"components", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxRows)}
	}
	out := [][]Button{}
	seen := map[string]bool{}
	for i, row := range rows {
		field := fmt.Sprintf("components.%d", i)
		if row.Type != 1 {
			return nil, &formError{field + ".type", "UNION_TYPE_CHOICES", "Value must be an action row (1) at the top level."}
		}
		if len(row.Components) == 0 || len(row.Components) > MaxButtons {
			return nil, &formError{field + ".components", "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between 1 and %d in length.", MaxButtons)}
		}
		var bs []Button
		for j, c := range row.Components {
			f := fmt.Sprintf("%s.components.%d", field, j)
			switch {
			case c.Type != 2:
				return nil, &formError{f + ".type", "UNION_TYPE_CHOICES", "Only buttons (2) are supported by this fake."}
			case c.Style < 1 || c.Style > 5:
				return nil, &formError{f + ".style", "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3, 4, 5)."}
			case utf8.RuneCountInString(c.Label) > MaxLabel:
				return nil, &formError{f + ".label", "BASE_TYPE_MAX_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxLabel)}
			case c.Style == 5 && (c.URL == "" || c.CustomID != ""):
				return nil, &formError{f + ".url", "BUTTON_COMPONENT_URL_REQUIRED", "A link button needs a url and no custom_id."}
			case c.Style != 5 && (c.CustomID == "" || utf8.RuneCountInString(c.CustomID) > MaxCustomID):
				return nil, &formError{f + ".custom_id", "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be between 1 and %d in length.", MaxCustomID)}
			case c.CustomID != "" && seen[c.CustomID]:
				return nil, &formError{f + ".custom_id", "COMPONENT_CUSTOM_ID_DUPLICATED", "Component custom id cannot be duplicated"}
			}
			seen[c.CustomID] = true
			bs = append(bs, Button{Label: c.Label, Style: c.Style, CustomID: c.CustomID, Disabled: c.Disabled})
		}
		out = append(out, bs)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// postMessage serves POST /channels/{channel}/messages.
func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	channelID := r.PathValue("channel")
	s.stallBody(r)
	body, multipart, files, err := readBody(r)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	var content string
	if body.Content != nil {
		content = *body.Content
	}
	if fe := checkContent(content); fe != nil {
		writeFormError(w, fe.field, fe.code, fe.msg)
		return
	}
	nonce, fe := body.nonce()
	if fe != nil {
		writeFormError(w, fe.field, fe.code, fe.msg)
		return
	}
	var rows [][]Button
	if body.Components != nil {
		var fe *formError
		if rows, fe = parseRows(*body.Components); fe != nil {
			writeFormError(w, fe.field, fe.code, fe.msg)
			return
		}
	}
	if strings.TrimSpace(content) == "" && len(rows) == 0 && len(files) == 0 {
		writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	}
	s.mu.Lock()
	ch, ok := s.channels[channelID]
	if !ok {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	if nonce != "" && body.EnforceNonce {
		if earlier := s.byNonceLocked(channelID, nonce); earlier != nil {
			// The same send again: Discord answers with the first message.
			obj := s.messageObjectLocked(earlier)
			s.mu.Unlock()
			writeJSON(w, http.StatusOK, obj)
			return
		}
	}
	m := &message{Message: Message{
		ChannelID: channelID, GuildID: ch.guildID, AuthorID: BotID, Content: content, Buttons: rows,
		AllowedMentions: body.AllowedMentions, Multipart: multipart, ContentLength: r.ContentLength,
		Nonce: nonce, Created: time.Now(),
	}}
	if ref := body.Reference; ref != nil && ref.MessageID != "" {
		target, ok := s.messages[ref.MessageID]
		switch {
		case ok && target.ChannelID == channelID:
			m.ReplyTo = ref.MessageID
			m.typ = 19
		case ref.FailIfNotExists == nil || *ref.FailIfNotExists:
			s.mu.Unlock()
			writeFormError(w, "message_reference", "REPLIES_UNKNOWN_MESSAGE", "Unknown message")
			return
		}
	}
	m.ID = s.newIDLocked()
	m.Files = s.storeFilesLocked(channelID, m.ID, files)
	s.messages[m.ID] = m
	s.order = append(s.order, m.ID)
	s.notifyLocked()
	obj := s.messageObjectLocked(m)
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, obj)
}

// patchMessage serves PATCH /channels/{channel}/messages/{message}.
func (s *Server) patchMessage(w http.ResponseWriter, r *http.Request) {
	channelID, messageID := r.PathValue("channel"), r.PathValue("message")
	body, _, _, err := readBody(r)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	if body.Content != nil {
		if fe := checkContent(*body.Content); fe != nil {
			writeFormError(w, fe.field, fe.code, fe.msg)
			return
		}
	}
	var rows [][]Button
	if body.Components != nil {
		var fe *formError
		if rows, fe = parseRows(*body.Components); fe != nil {
			writeFormError(w, fe.field, fe.code, fe.msg)
			return
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.botMessageLocked(w, channelID, messageID, 50005, "Cannot edit a message authored by another user")
	if m == nil {
		return
	}
	if body.Content != nil {
		m.Content = *body.Content
	}
	if body.Components != nil {
		m.Buttons = rows
	}
	if body.AllowedMentions != nil {
		m.AllowedMentions = body.AllowedMentions
	}
	if strings.TrimSpace(m.Content) == "" && len(m.Buttons) == 0 {
		writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	}
	m.Edits++
	m.History = append(m.History, Edit{At: time.Now(), Content: m.Content})
	s.notifyLocked()
	writeJSON(w, http.StatusOK, s.messageObjectLocked(m))
}

// messageObjectLocked renders m as Discord's message object. s.mu must be
// held.
func (s *Server) messageObjectLocked(m *message) map[string]any {
	author := userObject(m.AuthorID, s.nameLocked(m.AuthorID))
	if m.AuthorID == BotID {
		author = botUser()
	}
	rows := []any{}
	for _, r := range m.Buttons {
		var bs []any
		for _, b := range r {
			bs = append(bs, map[string]any{"type": 2, "style": b.Style, "label": b.Label, "custom_id": b.CustomID, "disabled": b.Disabled})
		}
		rows = append(rows, map[string]any{"type": 1, "components": bs})
	}
	obj := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "author": author, "content": m.Content,
		"timestamp": timestamp(m.Created), "edited_timestamp": nil, "tts": false,
		"mention_everyone": false, "mentions": []any{}, "mention_roles": []any{},
		"attachments": attachmentObjects(m.Files), "embeds": []any{}, "pinned": false, "type": m.typ,
		"flags": m.flags, "components": rows,
	}
	if m.GuildID != "" {
		obj["guild_id"] = m.GuildID
	}
	if m.ReplyTo != "" {
		obj["message_reference"] = map[string]any{"message_id": m.ReplyTo, "channel_id": m.ChannelID}
	}
	return obj
}
