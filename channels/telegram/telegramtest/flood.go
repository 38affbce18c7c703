package telegramtest

import (
	"net/http"
	"time"
)

// Flood control, as Telegram applies it: a chat that was answered 429 with
// retry_after N may not be sent to for N seconds. The real Bot API extends
// the ban of a bot that sends early; the fake answers such a call 429 with
// the time left and counts it, so a test can require none.

// floodState is the per-chat flood control of one Server.
type floodState struct {
	limits map[int64][]int       // chat → retry_after of the 429s still to answer
	banned map[int64]time.Time   // chat → until when its latest 429 bans it
	early  map[int64][]time.Time // chat → calls that came before the ban ended
}

// FloodChat makes the next len(retryAfters) calls that send to chatID
// (sendMessage, sendMessageDraft, editMessageText, sendChatAction,
// deleteMessage…) answer 429 with those retry_after seconds, one each, as
// Telegram's per-chat flood control does.
func (s *Server) FloodChat(chatID int64, retryAfters ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flood.limits == nil {
		s.flood = floodState{limits: map[int64][]int{}, banned: map[int64]time.Time{}, early: map[int64][]time.Time{}}
	}
	s.flood.limits[chatID] = append(s.flood.limits[chatID], retryAfters...)
}

// TooEarly returns the times of the calls to chatID that came before the
// retry_after of the chat's latest 429 had passed.
func (s *Server) TooEarly(chatID int64) []time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Time(nil), s.flood.early[chatID]...)
}

// floodFailure answers a call to a chat under flood control: 429 while the
// chat's latest ban lasts (counted as early), or the chat's next injected
// 429, which starts a new ban. Calls without a chat_id (getUpdates, getMe)
// are never flood-controlled.
func (s *Server) floodFailure(method string, p params) *apiError {
	if method == "getupdates" || method == "answercallbackquery" {
		return nil
	}
	chatID, bad := p.int64("chat_id")
	if bad != nil || chatID == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.flood.limits == nil {
		return nil
	}
	now := time.Now()
	if until, ok := s.flood.banned[chatID]; ok && now.Before(until) {
		s.flood.early[chatID] = append(s.flood.early[chatID], now)
		left := int(until.Sub(now)/time.Second) + 1
		return floodError(left)
	}
	next := s.flood.limits[chatID]
	if len(next) == 0 {
		return nil
	}
	s.flood.limits[chatID] = next[1:]
	s.flood.banned[chatID] = now.Add(time.Duration(next[0]) * time.Second)
	return floodError(next[0])
}

func floodError(retryAfter int) *apiError {
	return &apiError{status: http.StatusTooManyRequests, desc: defaultDescription(http.StatusTooManyRequests, retryAfter), retryAfter: retryAfter}
}
