package telegramtest

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// maxText is Telegram's message length limit, in UTF-16 code units of the
// text after entity parsing.
const maxText = 4096

// maxCallbackData is Telegram's limit on a button's callback_data, in bytes.
const maxCallbackData = 64

// Message is a message the bot sent, with its edits applied.
type Message struct {
	ID        int
	ChatID    int64
	ThreadID  int
	Text      string // as sent: HTML when ParseMode is "HTML"
	Visible   string // what a reader sees: tags dropped, entities decoded
	ParseMode string
	Buttons   [][]Button
	ReplyTo   int // id of the message replied to, 0 if none
	Edits     int // how many times it was edited
	// File is "photo", "voice" or "document" for a file the bot sent (see
	// Uploads); Text is then its caption.
	File string
	// Sent is when the server accepted the message.
	Sent time.Time
}

// Button is an inline keyboard button.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data,omitempty"`
	URL          string `json:"url,omitempty"`
}

// Edit is one successful edit of a bot message.
type Edit struct {
	Method    string // "editMessageText" or "editMessageReplyMarkup"
	MessageID int
	Text      string // new text; empty for editMessageReplyMarkup
	ParseMode string
	Buttons   [][]Button
	Time      time.Time // when the server accepted the edit
}

// chat is the server's view of one chat.
type chat struct {
	id      int64
	kind    string
	forum   bool
	nextID  int
	known   map[int]bool  // every message id in the chat
	senders map[int]int64 // the sender of each user message
	msgs    []*Message    // sent by the bot
	deleted []*Message    // sent by the bot, then deleted
	edits   []Edit
	drafts  []Draft
	actions []ChatAction
}

func (s *Server) chatLocked(id int64) *chat {
	c := s.chats[id]
	if c == nil {
		kind := "private"
		if id < 0 {
			kind = "supergroup"
		}
		c = &chat{id: id, kind: kind, known: map[int]bool{}, senders: map[int]int64{}}
		s.chats[id] = c
	}
	return c
}

func (c *chat) newMessageID() int {
	c.nextID++
	c.known[c.nextID] = true
	return c.nextID
}

func (c *chat) message(id int) *Message {
	for _, m := range c.msgs {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (c *chat) json() map[string]any {
	j := map[string]any{"id": c.id, "type": c.kind}
	if c.kind == "private" {
		j["first_name"] = "Chat"
	} else {
		j["title"] = "Test chat"
	}
	if c.forum {
		j["is_forum"] = true
	}
	return j
}

// Messages returns the messages the bot sent to chatID, oldest first.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.messagesLocked(chatID)
}

func (s *Server) messagesLocked(chatID int64) []Message {
	c := s.chats[chatID]
	if c == nil {
		return nil
	}
	out := make([]Message, 0, len(c.msgs))
	for _, m := range c.msgs {
		cp := *m
		cp.Buttons = cloneButtons(m.Buttons)
		out = append(out, cp)
	}
	return out
}

// Message returns the bot's message id in chatID as a reader sees it now,
// its edits applied; false when there is none (never sent, or deleted).
func (s *Server) Message(chatID int64, id int) (Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		return Message{}, false
	}
	m := c.message(id)
	if m == nil {
		return Message{}, false
	}
	cp := *m
	cp.Buttons = cloneButtons(m.Buttons)
	return cp, true
}

// WaitMessages waits until the bot sent at least n messages to chatID and
// returns them all; on ctx's end it returns what there is and ctx's error.
func (s *Server) WaitMessages(ctx context.Context, chatID int64, n int) ([]Message, error) {
	for {
		s.mu.Lock()
		msgs, ch := s.messagesLocked(chatID), s.changed
		s.mu.Unlock()
		if len(msgs) >= n {
			return msgs, nil
		}
		select {
		case <-ctx.Done():
			return msgs, ctx.Err()
		case <-ch:
		}
	}
}

// Edits returns the edits the bot made in chatID, oldest first.
func (s *Server) Edits(chatID int64) []Edit {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		return nil
	}
	out := slices.Clone(c.edits)
	for i := range out {
		out[i].Buttons = cloneButtons(out[i].Buttons)
	}
	return out
}

func cloneButtons(rows [][]Button) [][]Button {
	if rows == nil {
		return nil
	}
	out := make([][]Button, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)
	}
	return out
}

// checkText validates a message text as Telegram does and returns what a
// reader sees.
func checkText(text, parseMode string) (string, *apiError) {
	visible := text
	switch strings.ToLower(parseMode) {
	case "":
	case "html":
		v, err := ParseHTML(text)
		if err != nil {
			return "", badRequest("can't parse entities: " + err.Error())
		}
		visible = v
	case "markdown", "markdownv2":
		// Accepted without validation.
	default:
		return "", badRequest("unsupported parse_mode")
	}
	if strings.TrimSpace(visible) == "" {
		return "", badRequest("message text is empty")
	}
	if utf16Len(visible) > maxText {
		return "", badRequest("message is too long")
	}
	return visible, nil
}

// keyboard parses and validates a reply_markup parameter; only inline
// keyboards are kept.
func keyboard(p params) ([][]Button, *apiError) {
	var markup struct {
		InlineKeyboard [][]struct {
			Button
			CopyText struct {
				Text string `json:"text"`
			} `json:"copy_text"`
		} `json:"inline_keyboard"`
	}
	if err := p.json("reply_markup", &markup); err != nil {
		return nil, err
	}
	var rows [][]Button
	for _, row := range markup.InlineKeyboard {
		var out []Button
		for _, b := range row {
			if b.Text == "" {
				return nil, badRequest("text buttons are unallowed in the inline keyboard")
			}
			actions := 0
			for _, set := range []bool{b.CallbackData != "", b.URL != "", b.CopyText.Text != ""} {
				if set {
					actions++
				}
			}
			if actions != 1 {
				return nil, badRequest("can't parse inline keyboard button: exactly one of the optional fields must be used")
			}
			if len(b.CallbackData) > maxCallbackData {
				return nil, badRequest("BUTTON_DATA_INVALID")
			}
			out = append(out, b.Button)
		}
		if len(out) > 0 {
			rows = append(rows, out)
		}
	}
	return rows, nil
}

// replyTo reads reply_parameters or reply_to_message_id. A missing target
// is an error unless sending without the reply is allowed.
func replyTo(p params, c *chat) (int, *apiError) {
	var rp struct {
		MessageID                int  `json:"message_id"`
		AllowSendingWithoutReply bool `json:"allow_sending_without_reply"`
	}
	if err := p.json("reply_parameters", &rp); err != nil {
		return 0, err
	}
	if rp.MessageID == 0 {
		id, err := p.int("reply_to_message_id")
		if err != nil {
			return 0, err
		}
		rp.MessageID, rp.AllowSendingWithoutReply = id, p.bool("allow_sending_without_reply")
	}
	if rp.MessageID == 0 || c.known[rp.MessageID] {
		return rp.MessageID, nil
	}
	if rp.AllowSendingWithoutReply {
		return 0, nil
	}
	return 0, badRequest("message to be replied not found")
}

// sendCall is a send method's validated parameters.
type sendCall struct {
	chatID  int64
	text    string // as sent
	visible string
	buttons [][]Button
	thread  int
}

// parseSend validates the chat, the text (of field textField, checked by
// check), the keyboard and the topic of a send method.
func parseSend(p params, textField string, check func(text, parseMode string) (string, *apiError)) (sendCall, *apiError) {
	chatID, err := p.chatID()
	if err != nil {
		return sendCall{}, err
	}
	visible, err := check(p[textField], p["parse_mode"])
	if err != nil {
		return sendCall{}, err
	}
	buttons, err := keyboard(p)
	if err != nil {
		return sendCall{}, err
	}
	thread, err := p.int("message_thread_id")
	if err != nil {
		return sendCall{}, err
	}
	return sendCall{chatID: chatID, text: p[textField], visible: visible, buttons: buttons, thread: thread}, nil
}

// newBotMessageLocked builds the bot's new message in its chat, checking
// what it replies to; the caller appends it. s.mu must be held.
func (s *Server) newBotMessageLocked(sc sendCall, p params) (*chat, *Message, *apiError) {
	c := s.chatLocked(sc.chatID)
	reply, err := replyTo(p, c)
	if err != nil {
		return nil, nil, err
	}
	return c, &Message{
		ID: c.newMessageID(), ChatID: sc.chatID, ThreadID: sc.thread,
		Text: sc.text, Visible: sc.visible, ParseMode: p["parse_mode"],
		Buttons: sc.buttons, ReplyTo: reply, Sent: time.Now(),
	}, nil
}

func (s *Server) sendMessage(p params) (any, *apiError) {
	sc, err := parseSend(p, "text", checkText)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, m, err := s.newBotMessageLocked(sc, p)
	if err != nil {
		return nil, err
	}
	c.msgs = append(c.msgs, m)
	s.notifyLocked()
	if s.watch != nil {
		cp := *m
		cp.Buttons = cloneButtons(m.Buttons)
		s.watch(cp)
	}
	return s.messageJSONLocked(c, m), nil
}

// Watch calls f with a copy of every message the bot sends from now on
// (sendMessage), in the order the server accepts them, so that a load
// generator learns of each reply without polling every chat. f runs with
// the server locked: it must be quick and must not call the server (hand the
// message to a channel). A later call replaces f; nil stops watching.
func (s *Server) Watch(f func(Message)) {
	s.mu.Lock()
	s.watch = f
	s.mu.Unlock()
}

// botMessageLocked finds the bot message an edit names.
func (s *Server) botMessageLocked(p params) (*chat, *Message, *apiError) {
	if p["inline_message_id"] != "" {
		return nil, nil, badRequest("inline messages are not supported by telegramtest")
	}
	chatID, err := p.chatID()
	if err != nil {
		return nil, nil, err
	}
	id, err := p.int("message_id")
	if err != nil {
		return nil, nil, err
	}
	c := s.chats[chatID]
	if c == nil {
		return nil, nil, badRequest("chat not found")
	}
	m := c.message(id)
	if m == nil {
		return nil, nil, badRequest("message to edit not found")
	}
	return c, m, nil
}

var errNotModified = badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")

func (s *Server) editMessageText(p params) (any, *apiError) {
	visible, err := checkText(p["text"], p["parse_mode"])
	if err != nil {
		return nil, err
	}
	buttons, err := keyboard(p)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, m, err := s.botMessageLocked(p)
	if err != nil {
		return nil, err
	}
	if m.Text == p["text"] && m.ParseMode == p["parse_mode"] && sameButtons(m.Buttons, buttons) {
		return nil, errNotModified
	}
	m.Text, m.Visible, m.ParseMode, m.Buttons = p["text"], visible, p["parse_mode"], buttons
	m.Edits++
	c.edits = append(c.edits, Edit{Method: "editMessageText", MessageID: m.ID,
		Text: m.Text, ParseMode: m.ParseMode, Buttons: cloneButtons(buttons), Time: time.Now()})
	s.notifyLocked()
	return s.messageJSONLocked(c, m), nil
}

func (s *Server) editMessageReplyMarkup(p params) (any, *apiError) {
	buttons, err := keyboard(p)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, m, err := s.botMessageLocked(p)
	if err != nil {
		return nil, err
	}
	if sameButtons(m.Buttons, buttons) {
		return nil, errNotModified
	}
	m.Buttons = buttons
	m.Edits++
	c.edits = append(c.edits, Edit{Method: "editMessageReplyMarkup", MessageID: m.ID, Buttons: cloneButtons(buttons), Time: time.Now()})
	s.notifyLocked()
	return s.messageJSONLocked(c, m), nil
}

func sameButtons(a, b [][]Button) bool {
	return slices.EqualFunc(a, b, func(x, y []Button) bool { return slices.Equal(x, y) })
}

// messageJSONLocked renders a bot message as the Bot API returns it.
func (s *Server) messageJSONLocked(c *chat, m *Message) map[string]any {
	j := map[string]any{
		"message_id": m.ID,
		"date":       now(),
		"chat":       c.json(),
		"from":       map[string]any{"id": s.botID, "is_bot": true, "first_name": "Switchboard Test", "username": BotUsername},
		"text":       m.Visible,
	}
	if m.ThreadID != 0 {
		j["message_thread_id"] = m.ThreadID
		j["is_topic_message"] = true
	}
	if m.ReplyTo != 0 {
		j["reply_to_message"] = map[string]any{"message_id": m.ReplyTo, "date": now(), "chat": c.json()}
	}
	if len(m.Buttons) > 0 {
		j["reply_markup"] = map[string]any{"inline_keyboard": cloneButtons(m.Buttons)}
	}
	if m.Edits > 0 {
		j["edit_date"] = now()
	}
	return j
}

// rawJSON is an already encoded JSON value.
type rawJSON = json.RawMessage

func marshal(v any) (rawJSON, error) { return json.Marshal(v) }

// utf16Len counts s in UTF-16 code units, as Telegram measures text.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}
