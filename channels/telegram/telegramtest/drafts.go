package telegramtest

import (
	"net/http"
	"slices"
	"strings"
	"time"
)

// Draft is one sendMessageDraft call the server accepted: a private chat's
// ephemeral preview of a message being written. Calls with the same DraftID
// update the same draft; a draft is never a message (Messages does not list
// it), the bot makes it one by sending the final text with sendMessage.
type Draft struct {
	ChatID    int64
	ThreadID  int
	DraftID   int64
	Text      string // as sent: HTML when ParseMode is "HTML"
	Visible   string // what the reader sees: tags dropped, entities decoded
	ParseMode string
	Time      time.Time // when the server accepted the call
}

// Drafts returns the sendMessageDraft calls the server accepted for
// chatID, oldest first: each is one visible update of a draft.
func (s *Server) Drafts(chatID int64) []Draft {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.chats[chatID]; c != nil {
		return slices.Clone(c.drafts)
	}
	return nil
}

// RemoveMethod makes the server answer every call of method 404 Not Found,
// as Telegram answers a method it does not know: a Bot API older than the
// method.
func (s *Server) RemoveMethod(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removed == nil {
		s.removed = map[string]bool{}
	}
	s.removed[strings.ToLower(method)] = true
}

// removedMethod reports whether RemoveMethod removed method (lower case).
func (s *Server) removedMethod(method string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removed[method]
}

var errNotFound = &apiError{status: http.StatusNotFound, desc: "Not Found"}

// sendMessageDraft shows (or updates) a draft in a private chat, as
// sendMessageDraft does: chat_id must be a private chat (a positive id),
// draft_id non-zero, text 1 to 4096 characters after entity parsing.
func (s *Server) sendMessageDraft(p params) (any, *apiError) {
	chatID, err := p.chatID()
	if err != nil {
		return nil, err
	}
	if chatID < 0 {
		return nil, badRequest("drafts can be sent only to private chats")
	}
	draftID, err := p.int64("draft_id")
	if err != nil {
		return nil, err
	}
	if draftID == 0 {
		return nil, badRequest("draft_id must be non-zero")
	}
	visible, err := checkText(p["text"], p["parse_mode"])
	if err != nil {
		return nil, err
	}
	thread, err := p.int("message_thread_id")
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chatLocked(chatID)
	c.drafts = append(c.drafts, Draft{ChatID: chatID, ThreadID: thread, DraftID: draftID,
		Text: p["text"], Visible: visible, ParseMode: p["parse_mode"], Time: time.Now()})
	s.notifyLocked()
	return true, nil
}
