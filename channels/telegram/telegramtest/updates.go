package telegramtest

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// update is one queued update: its id and its JSON fields.
type update struct {
	id   int64
	chat int64 // 0 for updates without a chat
	body map[string]any
}

// Incoming describes a message a user sends to the bot.
type Incoming struct {
	ChatID   int64
	ChatType string // "private", "group" or "supergroup"; by default private for positive ids, supergroup for negative
	ThreadID int    // forum topic id; makes the chat a forum
	UserID   int64
	UserName string // the sender's first name
	IsBot    bool   // the sender is a bot
	Text     string
	ReplyTo  int // id of the message replied to: the bot's or a user's, with its sender
	// Entities of Text; nil: those Telegram finds by itself (a leading
	// /command, @username mentions).
	Entities []Entity
	Edited   bool           // deliver as edited_message
	Extra    map[string]any // more message fields, e.g. {"sticker": {...}}
}

// SendText delivers a text message from a user in chat chatID (a private
// chat when chatID is positive) and returns the update id.
func (s *Server) SendText(chatID, userID int64, userName, text string) (updateID int64) {
	id, _ := s.PushMessage(Incoming{ChatID: chatID, UserID: userID, UserName: userName, Text: text})
	return id
}

// SendTextInChat delivers a text message in a supergroup; a non-zero
// threadID puts it in that forum topic. It returns the update id.
func (s *Server) SendTextInChat(chatID int64, threadID int, userID int64, userName, text string) (updateID int64) {
	id, _ := s.PushMessage(Incoming{ChatID: chatID, ChatType: "supergroup", ThreadID: threadID,
		UserID: userID, UserName: userName, Text: text})
	return id
}

// PushMessage delivers the message in and returns the update id and the
// message id it got.
func (s *Server) PushMessage(in Incoming) (updateID int64, messageID int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chatLocked(in.ChatID)
	if in.ChatType != "" {
		c.kind = in.ChatType
	}
	if in.ThreadID != 0 {
		c.forum = true
	}
	name := in.UserName
	if name == "" {
		name = "User " + strconv.FormatInt(in.UserID, 10)
	}
	s.users[in.UserID] = name
	messageID = c.newMessageID()
	msg := map[string]any{
		"message_id": messageID,
		"date":       now(),
		"chat":       c.json(),
		"from":       map[string]any{"id": in.UserID, "is_bot": in.IsBot, "first_name": name},
	}
	if in.Text != "" {
		msg["text"] = in.Text
		entities := in.Entities
		if entities == nil {
			entities = derivedEntities(in.Text)
		}
		if len(entities) > 0 {
			msg["entities"] = s.entitiesJSONLocked(entities)
		}
	}
	if in.ThreadID != 0 {
		msg["message_thread_id"] = in.ThreadID
		msg["is_topic_message"] = true
	}
	if in.ReplyTo != 0 {
		msg["reply_to_message"] = s.repliedLocked(c, in.ReplyTo)
	}
	c.senders[messageID] = in.UserID
	if in.Edited {
		msg["edit_date"] = now()
	}
	maps.Copy(msg, in.Extra)
	key := "message"
	if in.Edited {
		key = "edited_message"
	}
	return s.pushLocked(map[string]any{key: msg}), messageID
}

// repliedLocked is the reply_to_message of a message replying to message
// id of chat c: the bot's message as sent, or a user's with its sender.
func (s *Server) repliedLocked(c *chat, id int) map[string]any {
	if m := c.message(id); m != nil {
		return s.messageJSONLocked(c, m)
	}
	j := map[string]any{"message_id": id, "date": now(), "chat": c.json()}
	if from, ok := c.senders[id]; ok {
		j["from"] = map[string]any{"id": from, "is_bot": false, "first_name": s.users[from]}
	}
	return j
}

// PressButton delivers a callback query: user userID pressed the button
// carrying data on message messageID in chat chatID. It returns the update
// id; the query's id is in CallbackAnswers once the bot answers it.
func (s *Server) PressButton(chatID, userID int64, messageID int, data string) (updateID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chatLocked(chatID)
	msg := map[string]any{"message_id": messageID, "date": now(), "chat": c.json()}
	if m := c.message(messageID); m != nil {
		msg = s.messageJSONLocked(c, m)
	}
	name := s.users[userID]
	if name == "" {
		name = "User " + strconv.FormatInt(userID, 10)
	}
	s.nextCB++
	id := fmt.Sprintf("%d%06d", s.botID, s.nextCB)
	s.callbacks[id] = &callbackQuery{id: id}
	return s.pushLocked(map[string]any{"callback_query": map[string]any{
		"id":            id,
		"from":          map[string]any{"id": userID, "is_bot": false, "first_name": name},
		"message":       msg,
		"chat_instance": strconv.FormatInt(chatID, 10),
		"data":          data,
	}})
}

// PushUpdate delivers a raw update, given as its JSON fields without
// update_id, and returns the id it got.
func (s *Server) PushUpdate(fields map[string]any) (updateID int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pushLocked(maps.Clone(fields))
}

func (s *Server) pushLocked(body map[string]any) int64 {
	s.nextUpd++
	u := update{id: s.nextUpd, chat: chatOfUpdate(body), body: body}
	body["update_id"] = u.id
	s.queue = append(s.queue, u)
	s.history[u.id] = u
	s.notifyLocked()
	return u.id
}

// Redeliver makes the next getUpdates return update updateID again,
// whatever its offset, as Telegram does when a bot restarts before
// confirming it.
func (s *Server) Redeliver(updateID int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	u, ok := s.history[updateID]
	if !ok {
		return fmt.Errorf("telegramtest: no update %d", updateID)
	}
	if s.wh.hook != nil {
		// Posted again, in id order with the other pending updates.
		if !slices.ContainsFunc(s.queue, func(q update) bool { return q.id == u.id }) {
			i, _ := slices.BinarySearchFunc(s.queue, u.id, func(q update, id int64) int { return cmp.Compare(q.id, id) })
			s.queue = slices.Insert(s.queue, i, u)
		}
	} else {
		s.forced = append(s.forced, u)
	}
	s.notifyLocked()
	return nil
}

// chatOfUpdate returns the chat id of a message or callback query update.
func chatOfUpdate(body map[string]any) int64 {
	msg, _ := body["message"].(map[string]any)
	if msg == nil {
		msg, _ = body["edited_message"].(map[string]any)
	}
	if cb, ok := body["callback_query"].(map[string]any); ok {
		msg, _ = cb["message"].(map[string]any)
	}
	chat, _ := msg["chat"].(map[string]any)
	switch id := chat["id"].(type) {
	case int64:
		return id
	case float64:
		return int64(id)
	}
	return 0
}

// Pending returns the ids of the updates not yet confirmed by a getUpdates
// call with a higher offset.
func (s *Server) Pending() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	ids := make([]int64, 0, len(s.queue))
	for _, u := range s.queue {
		ids = append(ids, u.id)
	}
	return ids
}

// confirmLocked forgets the updates a getUpdates offset confirms.
func (s *Server) confirmLocked(offset int64) {
	switch {
	case offset > 0:
		i := 0
		for i < len(s.queue) && s.queue[i].id < offset {
			i++
		}
		s.queue = slices.Delete(s.queue, 0, i)
	case offset < 0:
		if keep := int(-offset); keep < len(s.queue) {
			s.queue = slices.Delete(s.queue, 0, len(s.queue)-keep)
		}
	}
}

// serveGetUpdates serves getUpdates: it confirms the updates below offset
// and returns the pending ones, waiting up to timeout seconds for one to
// arrive. A newer getUpdates call ends an older one with 409 Conflict.
func (s *Server) serveGetUpdates(w http.ResponseWriter, r *http.Request, p params) {
	offset, e1 := p.int64("offset")
	limit, e2 := p.int("limit")
	timeout, e3 := p.int("timeout")
	for _, e := range []*apiError{e1, e2, e3} {
		if e != nil {
			writeError(w, e)
			return
		}
	}
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	deadline := time.Now().Add(time.Duration(max(timeout, 0)) * time.Second)

	s.mu.Lock()
	if e := s.webhookConflictLocked(); e != nil {
		s.mu.Unlock()
		writeError(w, e)
		return
	}
	s.poller++
	gen := s.poller
	s.notifyLocked()
	for {
		if gen != s.poller {
			s.mu.Unlock()
			writeError(w, &apiError{status: http.StatusConflict, desc: defaultDescription(http.StatusConflict, 0)})
			return
		}
		s.confirmLocked(offset)
		var batch []map[string]any
		for _, u := range s.forced {
			batch = append(batch, u.body)
		}
		s.forced = nil
		for _, u := range s.queue {
			if len(batch) >= limit {
				break
			}
			batch = append(batch, u.body)
		}
		wait := time.Until(deadline)
		if len(batch) > 0 || wait <= 0 {
			out, err := encodeUpdates(batch)
			s.mu.Unlock()
			if err != nil {
				writeError(w, &apiError{status: http.StatusInternalServerError, desc: err.Error()})
				return
			}
			writeResult(w, out)
			return
		}
		ch := s.changed
		s.mu.Unlock()
		timer := time.NewTimer(wait)
		select {
		case <-ch:
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return
		case <-s.done:
			timer.Stop()
			return
		}
		timer.Stop()
		s.mu.Lock()
	}
}

// encodeUpdates snapshots updates as JSON so later changes do not race
// with the response being written.
func encodeUpdates(batch []map[string]any) ([]rawJSON, error) {
	out := make([]rawJSON, 0, len(batch))
	for _, b := range batch {
		raw, err := marshal(b)
		if err != nil {
			return nil, err
		}
		out = append(out, raw)
	}
	return out, nil
}
