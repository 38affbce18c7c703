package slacktest

import (
	"fmt"
	"net/url"
	"strings"
	"time"
)

// shownMessage is what a person sees of one bot message.
type shownMessage struct {
	channel, ts string
	text        string // the section text (else the text field), or the streamed Markdown
	streaming   bool   // started by chat.startStream and not stopped yet
	deleted     bool
}

// DisableStreaming makes chat.startStream, chat.appendStream and
// chat.stopStream answer unknown_method, as a workspace without Slack's
// streaming methods does.
func (s *Server) DisableStreaming() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noStream = true
}

// Shown returns the text a person sees of the message ts in channel: the
// section text of its latest post or update, or the Markdown streamed
// into it so far. ok is false for a message never posted, or deleted.
func (s *Server) Shown(channel, ts string) (text string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.liveLocked(channel, ts)
	if !ok {
		return "", false
	}
	return m.text, true
}

// Streaming reports whether the message ts in channel is a stream not
// stopped yet.
func (s *Server) Streaming(channel, ts string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.liveLocked(channel, ts)
	return ok && m.streaming
}

// Visible returns, oldest first, the texts a person sees of the bot's
// messages in channel that were posted or streamed and not deleted.
func (s *Server) Visible(channel string) []string {
	var out []string
	for _, m := range s.visible(channel) {
		out = append(out, m.text)
	}
	return out
}

// VisibleTS returns the ts of the messages Visible returns, in the same
// order.
func (s *Server) VisibleTS(channel string) []string {
	var out []string
	for _, m := range s.visible(channel) {
		out = append(out, m.ts)
	}
	return out
}

// visible returns copies of the bot's messages in channel not deleted,
// oldest first.
func (s *Server) visible(channel string) []shownMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []shownMessage
	for _, key := range s.order {
		if m := s.shown[key]; m.channel == channel && !m.deleted {
			out = append(out, *m)
		}
	}
	return out
}

// liveLocked returns the message ts in channel unless it was never posted
// or is deleted; call with s.mu held.
func (s *Server) liveLocked(channel, ts string) (*shownMessage, bool) {
	m, ok := s.shown[channel+" "+ts]
	if !ok || m.deleted {
		return nil, false
	}
	return m, true
}

// showLocked applies a recorded chat call to what people see; call with
// s.mu held.
func (s *Server) showLocked(m Message) {
	text := m.Section
	if text == "" {
		text = m.Text
	}
	key := m.Channel + " " + m.TS
	switch m.Method {
	case "chat.postMessage":
		s.shown[key] = &shownMessage{channel: m.Channel, ts: m.TS, text: text}
		s.order = append(s.order, key)
	case "chat.update":
		if sm, ok := s.shown[key]; ok {
			sm.text = text
		}
	}
}

// startStream serves chat.startStream: a new message in a thread, showing
// markdown_text, that chat.appendStream adds to until chat.stopStream.
// As Slack requires, thread_ts must be set, and outside direct messages
// recipient_user_id and recipient_team_id too.
func (s *Server) startStream(v url.Values) (any, error) {
	m := Message{Method: "chat.startStream", Channel: v.Get("channel"), ThreadTS: v.Get("thread_ts"),
		MarkdownText: v.Get("markdown_text"), RecipientUser: v.Get("recipient_user_id"), RecipientTeam: v.Get("recipient_team_id")}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.noStream:
		return nil, slackError("unknown_method")
	case m.Channel == "" || strings.HasPrefix(m.Channel, "U") || strings.HasPrefix(m.Channel, "W"):
		return nil, slackError("channel_not_found")
	case m.ThreadTS == "":
		return nil, slackError("invalid_arguments")
	case !strings.HasPrefix(m.Channel, "D") && m.RecipientUser == "":
		return nil, slackError("missing_recipient_user_id")
	case !strings.HasPrefix(m.Channel, "D") && m.RecipientTeam == "":
		return nil, slackError("missing_recipient_team_id")
	}
	s.seq++
	m.TS = fmt.Sprintf("%d.%06d", time.Now().Unix(), s.seq)
	m.At = time.Now()
	s.messages = append(s.messages, m)
	key := m.Channel + " " + m.TS
	s.shown[key] = &shownMessage{channel: m.Channel, ts: m.TS, text: m.MarkdownText, streaming: true}
	s.order = append(s.order, key)
	s.notify()
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS}, nil
}

// appendStream serves chat.appendStream: markdown_text (required) is
// added to the end of a message still streaming.
func (s *Server) appendStream(v url.Values) (any, error) {
	return s.streamCall("chat.appendStream", v, true)
}

// stopStream serves chat.stopStream: the optional markdown_text is added
// and the message stops streaming.
func (s *Server) stopStream(v url.Values) (any, error) {
	return s.streamCall("chat.stopStream", v, false)
}

// streamCall adds markdown_text to a streaming message and records the
// call; a stop (keep false) ends the stream.
func (s *Server) streamCall(method string, v url.Values, keep bool) (any, error) {
	m := Message{Method: method, Channel: v.Get("channel"), TS: v.Get("ts"), MarkdownText: v.Get("markdown_text")}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noStream {
		return nil, slackError("unknown_method")
	}
	if m.Channel == "" {
		return nil, slackError("channel_not_found")
	}
	sm, ok := s.liveLocked(m.Channel, m.TS)
	switch {
	case !ok:
		return nil, slackError("message_not_found")
	case !sm.streaming:
		return nil, slackError("message_not_in_streaming_state")
	case keep && m.MarkdownText == "":
		return nil, slackError("invalid_arguments")
	}
	sm.text += m.MarkdownText
	sm.streaming = keep
	m.At = time.Now()
	s.messages = append(s.messages, m)
	s.notify()
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS}, nil
}
