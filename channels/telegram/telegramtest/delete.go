package telegramtest

import "slices"

// Deleted returns the bot messages deleted from chatID (deleteMessage),
// oldest deletion first. Messages no longer lists them.
func (s *Server) Deleted(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		return nil
	}
	out := make([]Message, 0, len(c.deleted))
	for _, m := range c.deleted {
		cp := *m
		cp.Buttons = cloneButtons(m.Buttons)
		out = append(out, cp)
	}
	return out
}

// deleteMessage removes a bot message, as deleteMessage does.
func (s *Server) deleteMessage(p params) (any, *apiError) {
	chatID, err := p.chatID()
	if err != nil {
		return nil, err
	}
	id, err := p.int("message_id")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chats[chatID]
	if c == nil {
		return nil, badRequest("chat not found")
	}
	i := slices.IndexFunc(c.msgs, func(m *Message) bool { return m.ID == id })
	if i < 0 {
		return nil, badRequest("message to delete not found")
	}
	c.deleted = append(c.deleted, c.msgs[i])
	c.msgs = slices.Delete(c.msgs, i, i+1)
	s.notifyLocked()
	return true, nil
}
