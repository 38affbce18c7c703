package slacktest

import (
	"net/url"
	"time"
)

// chatDelete serves chat.delete: the bot's posted (or streamed) message with that ts is
// recorded as deleted (a Message with Method "chat.delete"); deleting it
// again, or a message never posted, answers message_not_found.
func (s *Server) chatDelete(v url.Values) (any, error) {
	channel, ts := v.Get("channel"), v.Get("ts")
	if channel == "" {
		return nil, slackError("channel_not_found")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	sm, ok := s.liveLocked(channel, ts)
	if !ok {
		return nil, slackError("message_not_found")
	}
	sm.deleted = true
	sm.streaming = false
	s.messages = append(s.messages, Message{Method: "chat.delete", Channel: channel, TS: ts, At: time.Now()})
	s.notify()
	return map[string]any{"ok": true, "channel": channel, "ts": ts}, nil
}
