package slacktest

import "net/url"

// chatDelete serves chat.delete: the bot's posted message with that ts is
// recorded as deleted (a Message with Method "chat.delete"); deleting it
// again, or a message never posted, answers message_not_found.
func (s *Server) chatDelete(v url.Values) (any, error) {
	channel, ts := v.Get("channel"), v.Get("ts")
	if channel == "" {
		return nil, slackError("channel_not_found")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	posted, deleted := false, false
	for _, m := range s.messages {
		if m.Channel != channel || m.TS != ts {
			continue
		}
		posted = posted || m.Method == "chat.postMessage"
		deleted = deleted || m.Method == "chat.delete"
	}
	if !posted || deleted {
		return nil, slackError("message_not_found")
	}
	s.messages = append(s.messages, Message{Method: "chat.delete", Channel: channel, TS: ts})
	s.notify()
	return map[string]any{"ok": true, "channel": channel, "ts": ts}, nil
}
