// Package slacktest fakes the parts of Slack the slack channel talks to,
// for tests: the Web API methods it calls (served by slack-go's own
// slacktest server, with handlers for what that lacks), file downloads
// for the bot token and upload v2, a Socket Mode WebSocket endpoint
// speaking the envelope protocol, and signed Events API requests.
package slacktest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	upstream "github.com/slack-go/slack/slacktest"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// Identities the fake answers with.
const (
	BotUserID = "UBOT00001" // the bot's user id (auth.test user_id)
	BotID     = "BBOT00001" // the bot's bot id (auth.test bot_id)
	TeamID    = "T00000001"
	AppID     = "A00000001"
)

// Button is one button of an actions block.
type Button struct {
	ActionID string
	Label    string
	Value    string
}

// Message is one chat.postMessage, chat.update, chat.postEphemeral,
// chat.delete, chat.startStream, chat.appendStream or chat.stopStream
// call, or a file shared by files.completeUploadExternal.
type Message struct {
	Method   string // "chat.postMessage", "chat.update", "chat.postEphemeral", "chat.delete", "chat.startStream", "chat.appendStream", "chat.stopStream" or "files.completeUploadExternal"
	Channel  string
	TS       string // the message's ts (assigned, or the one updated)
	ThreadTS string
	User     string // chat.postEphemeral: who sees it
	Text     string // the text field; a shared file's initial_comment
	Section  string // the text of the section block, "" without one
	Verbatim bool   // the section text is verbatim
	Buttons  [][]Button
	Blocks   int  // number of blocks
	NoBlocks bool // the call carried no blocks field

	MarkdownText  string    // chat.*Stream: the markdown_text field
	RecipientUser string    // chat.startStream: recipient_user_id
	RecipientTeam string    // chat.startStream: recipient_team_id
	At            time.Time // when the fake took the call
}

// failure is a scripted answer to the next calls of a method.
type failure struct {
	status     int    // HTTP status; 0 means 200
	slackError string // {"ok":false,"error":…}
	retryAfter int    // seconds, with status 429
	times      int
}

// Server is a fake Slack: Web API and Socket Mode on one HTTP server.
type Server struct {
	api      *upstream.Server
	botToken string
	appToken string

	mu       sync.Mutex
	changed  chan struct{} // closed and replaced on every change
	requests map[string]int
	failures map[string][]*failure
	messages []Message
	shown    map[string]*shownMessage // channel+" "+ts → what a person sees
	order    []string                 // shown's keys, oldest message first
	noStream bool                     // DisableStreaming
	users    map[string]string        // id → display name
	opens    map[string]string        // user id → IM channel id
	seq      int

	socket socketState
	files  fileState
	stall  *channeltest.Stall // StallUpload's, for the next upload

	done      chan struct{} // closed by Close: stalled uploads fail
	closeOnce sync.Once
}

// NewServer starts a fake that accepts botToken on the Web API and
// appToken on apps.connections.open. Close it when done.
func NewServer(botToken, appToken string) *Server {
	s := &Server{
		botToken: botToken,
		appToken: appToken,
		changed:  make(chan struct{}),
		done:     make(chan struct{}),
		requests: map[string]int{},
		failures: map[string][]*failure{},
		shown:    map[string]*shownMessage{},
		users:    map[string]string{},
		opens:    map[string]string{},
	}
	s.socket.init()
	s.files.init()
	s.api = upstream.NewTestServer(func(c upstream.Customize) {
		for method, h := range map[string]func(url.Values) (any, error){
			"auth.test":          s.authTest,
			"users.info":         s.usersInfo,
			"conversations.open": s.conversationsOpen,
			"chat.postMessage":   s.postMessage,
			"chat.update":        s.update,
			"chat.postEphemeral": s.postEphemeral,
			"chat.delete":        s.chatDelete,
			"chat.startStream":   s.startStream,
			"chat.appendStream":  s.appendStream,
			"chat.stopStream":    s.stopStream,

			"files.getUploadURLExternal":   s.getUploadURL,
			"files.completeUploadExternal": s.completeUpload,
			"files.info":                   s.filesInfo,
		} {
			c.Handle("/"+method, s.webMethod(method, h))
		}
		c.Handle(downloadPath, s.serveDownload)
		c.Handle(uploadPath, s.serveUpload)
		c.Handle("/apps.connections.open", s.connectionsOpen)
		c.Handle("/socket-mode", s.serveSocket)
	})
	s.api.Start()
	return s
}

// URL is the Web API base URL, for the channel's APIURL option.
func (s *Server) URL() string { return s.api.GetAPIURL() }

// Close drops every Socket Mode connection and stops the server.
func (s *Server) Close() {
	s.closeOnce.Do(func() { close(s.done) })
	s.closeSockets()
	s.api.Stop()
	s.socket.wg.Wait()
}

// SetUser sets the display name users.info reports for id.
func (s *Server) SetUser(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = name
}

// Fail makes the next times calls of method answer {"ok":false,"error":slackError}.
func (s *Server) Fail(method, slackError string, times int) {
	s.script(method, &failure{slackError: slackError, times: times})
}

// FailHTTP makes the next times calls of method answer HTTP status.
func (s *Server) FailHTTP(method string, status, times int) {
	s.script(method, &failure{status: status, times: times})
}

// RateLimit makes the next times calls of method answer 429 Too Many
// Requests with Retry-After: retryAfter seconds.
func (s *Server) RateLimit(method string, retryAfter, times int) {
	s.script(method, &failure{status: http.StatusTooManyRequests, retryAfter: retryAfter, times: times})
}

func (s *Server) script(method string, f *failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures[method] = append(s.failures[method], f)
}

// Requests returns how many calls of method the fake received.
func (s *Server) Requests(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[method]
}

// WaitRequests waits until method was called at least n times.
func (s *Server) WaitRequests(ctx context.Context, method string, n int) error {
	return s.waitFor(ctx, func() bool { return s.requests[method] >= n },
		func() string { return fmt.Sprintf("%d calls of %s, want %d", s.requests[method], method, n) })
}

// Messages returns the chat calls (posts, updates, ephemerals, deletes,
// stream calls) made in channel, in order, each with its time.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if m.Channel == channel {
			out = append(out, m)
		}
	}
	return out
}

// Posted returns the chat calls of method made in channel, in order.
func (s *Server) Posted(channel, method string) []Message {
	var out []Message
	for _, m := range s.Messages(channel) {
		if m.Method == method {
			out = append(out, m)
		}
	}
	return out
}

// IM returns the IM channel id conversations.open gives for user.
func IM(user string) string { return "D" + user }

// waitFor waits until cond (called with s.mu held) holds, or ctx ends
// with an error saying why from state.
func (s *Server) waitFor(ctx context.Context, cond func() bool, state func() string) error {
	for {
		s.mu.Lock()
		ok := cond()
		ch := s.changed
		var why string
		if !ok {
			why = state()
		}
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("slacktest: %s: %w", why, ctx.Err())
		case <-ch:
		}
	}
}

// notify wakes waiters; call with s.mu held.
func (s *Server) notify() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// webMethod serves one Web API method: it counts the call, checks the bot
// token, plays scripted failures and encodes h's answer.
func (s *Server) webMethod(method string, h func(url.Values) (any, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.mu.Lock()
		s.requests[method]++
		s.notify()
		f := s.nextFailure(method)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch {
		case writeFailure(w, f):
			return
		case token(r) != s.botToken:
			writeJSON(w, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		}
		out, err := h(r.Form)
		if err != nil {
			writeJSON(w, map[string]any{"ok": false, "error": err.Error()})
			return
		}
		writeJSON(w, out)
	}
}

// writeFailure answers with the scripted failure f, if any, and reports
// whether it did.
func writeFailure(w http.ResponseWriter, f *failure) bool {
	switch {
	case f == nil:
		return false
	case f.status == http.StatusTooManyRequests:
		w.Header().Set("Retry-After", strconv.Itoa(f.retryAfter))
		w.WriteHeader(f.status)
		_, _ = w.Write([]byte(`{"ok":false,"error":"ratelimited"}`))
	case f.status != 0:
		w.WriteHeader(f.status)
	default:
		writeJSON(w, map[string]any{"ok": false, "error": f.slackError})
	}
	return true
}

// nextFailure pops the scripted failure for method, if any; call with
// s.mu held.
func (s *Server) nextFailure(method string) *failure {
	fs := s.failures[method]
	if len(fs) == 0 {
		return nil
	}
	f := fs[0]
	f.times--
	if f.times <= 0 {
		s.failures[method] = fs[1:]
	}
	return f
}

// token is the request's token: the form field, else the bearer header.
func token(r *http.Request) string {
	if t := r.Form.Get("token"); t != "" {
		return t
	}
	return strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
}

func writeJSON(w http.ResponseWriter, v any) {
	_ = json.NewEncoder(w).Encode(v)
}

// slackError is an {"ok":false} answer.
type slackError string

func (e slackError) Error() string { return string(e) }

func (s *Server) authTest(url.Values) (any, error) {
	return map[string]any{"ok": true, "url": "https://fake.slack.test/", "team": "Fake", "team_id": TeamID,
		"user": "switchboard", "user_id": BotUserID, "bot_id": BotID}, nil
}

func (s *Server) usersInfo(v url.Values) (any, error) {
	id := v.Get("user")
	s.mu.Lock()
	name, ok := s.users[id]
	s.mu.Unlock()
	if !ok {
		return nil, slackError("user_not_found")
	}
	return map[string]any{"ok": true, "user": map[string]any{"id": id, "name": strings.ToLower(name),
		"real_name": name, "profile": map[string]any{"display_name": name, "real_name": name}}}, nil
}

func (s *Server) conversationsOpen(v url.Values) (any, error) {
	user := v.Get("users")
	if user == "" || strings.Contains(user, ",") {
		return nil, slackError("invalid_arguments")
	}
	s.mu.Lock()
	s.opens[user] = IM(user)
	s.mu.Unlock()
	return map[string]any{"ok": true, "channel": map[string]any{"id": IM(user), "is_im": true, "user": user}}, nil
}

func (s *Server) postMessage(v url.Values) (any, error) {
	m, err := s.record("chat.postMessage", v, "")
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS,
		"message": map[string]any{"type": "message", "text": m.Text, "ts": m.TS, "thread_ts": m.ThreadTS, "bot_id": BotID}}, nil
}

func (s *Server) update(v url.Values) (any, error) {
	ts := v.Get("ts")
	s.mu.Lock()
	_, found := s.liveLocked(v.Get("channel"), ts)
	s.mu.Unlock()
	if !found {
		return nil, slackError("message_not_found")
	}
	m, err := s.record("chat.update", v, ts)
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "channel": m.Channel, "ts": m.TS, "text": m.Text}, nil
}

func (s *Server) postEphemeral(v url.Values) (any, error) {
	if v.Get("user") == "" {
		return nil, slackError("user_not_found")
	}
	m, err := s.record("chat.postEphemeral", v, "")
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "message_ts": m.TS}, nil
}

// record stores a chat call; ts "" assigns a new one.
func (s *Server) record(method string, v url.Values, ts string) (Message, error) {
	m := Message{Method: method, Channel: v.Get("channel"), ThreadTS: v.Get("thread_ts"), User: v.Get("user"), Text: v.Get("text")}
	if m.Channel == "" {
		return m, slackError("channel_not_found")
	}
	if strings.HasPrefix(m.Channel, "U") || strings.HasPrefix(m.Channel, "W") {
		// Slack posts to a user id in the app's messages tab; the channel
		// must open the IM first so that edits find the message.
		return m, slackError("channel_not_found")
	}
	if _, ok := v["blocks"]; !ok {
		m.NoBlocks = true
	} else if err := decodeBlocks(v.Get("blocks"), &m); err != nil {
		return m, slackError("invalid_blocks")
	}
	if m.Text == "" && m.Section == "" {
		return m, slackError("no_text")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts == "" {
		s.seq++
		ts = fmt.Sprintf("%d.%06d", time.Now().Unix(), s.seq)
	}
	m.TS = ts
	m.At = time.Now()
	s.messages = append(s.messages, m)
	s.showLocked(m)
	s.notify()
	return m, nil
}

// decodeBlocks reads the section text and the buttons of a blocks field.
func decodeBlocks(raw string, m *Message) error {
	var blocks []struct {
		Type string `json:"type"`
		Text *struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Verbatim bool   `json:"verbatim"`
		} `json:"text"`
		Elements []struct {
			Type     string `json:"type"`
			ActionID string `json:"action_id"`
			Value    string `json:"value"`
			Text     struct {
				Text string `json:"text"`
			} `json:"text"`
		} `json:"elements"`
	}
	if err := json.Unmarshal([]byte(raw), &blocks); err != nil {
		return err
	}
	m.Blocks = len(blocks)
	for _, b := range blocks {
		switch b.Type {
		case "section":
			if b.Text == nil || b.Text.Type != "mrkdwn" {
				return fmt.Errorf("section without mrkdwn text")
			}
			m.Section += b.Text.Text
			m.Verbatim = b.Text.Verbatim
		case "actions":
			var row []Button
			for _, e := range b.Elements {
				row = append(row, Button{ActionID: e.ActionID, Label: e.Text.Text, Value: e.Value})
			}
			m.Buttons = append(m.Buttons, row)
		}
	}
	return nil
}
