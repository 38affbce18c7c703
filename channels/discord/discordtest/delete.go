package discordtest

import (
	"net/http"
	"slices"
)

// Deleted returns the bot messages deleted in channelID, oldest deletion
// first. Messages no longer lists them.
func (s *Server) Deleted(channelID string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.deleted {
		if m.ChannelID == channelID {
			m.Buttons = cloneRows(m.Buttons)
			out = append(out, m)
		}
	}
	return out
}

// deleteMessage serves DELETE /channels/{channel}/messages/{message}.
func (s *Server) deleteMessage(w http.ResponseWriter, r *http.Request) {
	channelID, messageID := r.PathValue("channel"), r.PathValue("message")
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.botMessageLocked(w, channelID, messageID, 50013, "Missing Permissions")
	if m == nil {
		return
	}
	delete(s.messages, messageID)
	s.order = slices.DeleteFunc(s.order, func(id string) bool { return id == messageID })
	s.deleted = append(s.deleted, m.Message)
	s.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

// botMessageLocked returns the bot's message messageID in channelID, or
// answers the request with Discord's error (unknown channel or message, or
// code/msg when another user wrote it) and returns nil.
func (s *Server) botMessageLocked(w http.ResponseWriter, channelID, messageID string, code int, msg string) *message {
	if _, ok := s.channels[channelID]; !ok {
		writeError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return nil
	}
	m, ok := s.messages[messageID]
	if !ok || m.ChannelID != channelID {
		writeError(w, http.StatusNotFound, 10008, "Unknown Message")
		return nil
	}
	if m.AuthorID != BotID {
		writeError(w, http.StatusForbidden, code, msg)
		return nil
	}
	return m
}
