package telegramtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// maxControlWait caps the wait parameter of GET /control/messages.
const maxControlWait = 60 * time.Second

// Control returns an HTTP handler that drives the fake from outside the
// process — a script or a person trying the bot (deploy/fakes serves it) —
// with the same methods tests call:
//
//	POST /control/send      {"chat_id":700,"user_id":700,"user_name":"Dev","text":"hi"}
//	POST /control/press     {"chat_id":500,"user_id":500,"message_id":3,"data":"ap:…:o"}
//	POST /control/press     {"chat_id":500,"user_id":500,"label":"Allow once"}
//	GET  /control/messages?chat_id=500[&after=ID][&contains=TEXT][&wait=10s]
//	GET  /control/answers
//
// send is a user's text message (chat_id defaults to user_id, a private
// chat) and press a tap on an inline button: by its callback data, or by
// its label on message_id or, without one, on the newest bot message in
// the chat that has such a button. Both answer {"update_id":N}. messages
// lists what the bot sent to the chat (id, visible text, buttons, edits);
// after keeps those with a larger id, contains those whose text contains
// TEXT, and wait holds the answer until there is one (at most a minute). answers lists the bot's answers to
// presses. Errors are 4xx with {"error":"…"}.
//
// The handler answers loopback clients only: whoever reaches it can speak
// as any Telegram user to the bot under test.
func (s *Server) Control() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /control/send", s.controlSend)
	mux.HandleFunc("POST /control/press", s.controlPress)
	mux.HandleFunc("GET /control/messages", s.controlMessages)
	mux.HandleFunc("GET /control/answers", func(w http.ResponseWriter, _ *http.Request) {
		writeControl(w, http.StatusOK, s.CallbackAnswers())
	})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !loopbackClient(r) {
			writeControl(w, http.StatusForbidden, controlError{"the control endpoint answers loopback clients only"})
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// controlError is the body of a refused control request.
type controlError struct {
	Error string `json:"error"`
}

// controlUpdate answers send and press.
type controlUpdate struct {
	UpdateID int64 `json:"update_id"`
}

// ControlMessage is one bot message as GET /control/messages lists it.
type ControlMessage struct {
	ID      int        `json:"id"`
	Text    string     `json:"text"` // what a reader sees
	Buttons [][]Button `json:"buttons,omitempty"`
	Edits   int        `json:"edits"`
	ReplyTo int        `json:"reply_to,omitempty"`
}

func (s *Server) controlSend(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ChatID   int64  `json:"chat_id"`
		UserID   int64  `json:"user_id"`
		UserName string `json:"user_name"`
		Text     string `json:"text"`
	}
	if !readControl(w, r, &body) {
		return
	}
	if body.UserID <= 0 || body.Text == "" {
		writeControl(w, http.StatusBadRequest, controlError{`send needs a positive "user_id" and a "text"`})
		return
	}
	if body.ChatID == 0 {
		body.ChatID = body.UserID
	}
	id := s.SendText(body.ChatID, body.UserID, body.UserName, body.Text)
	writeControl(w, http.StatusOK, controlUpdate{UpdateID: id})
}

func (s *Server) controlPress(w http.ResponseWriter, r *http.Request) {
	var body struct {
		ChatID    int64  `json:"chat_id"`
		UserID    int64  `json:"user_id"`
		MessageID int    `json:"message_id"`
		Data      string `json:"data"`
		Label     string `json:"label"`
	}
	if !readControl(w, r, &body) {
		return
	}
	if body.UserID <= 0 || (body.Data == "") == (body.Label == "") {
		writeControl(w, http.StatusBadRequest, controlError{`press needs a positive "user_id" and either "data" or "label"`})
		return
	}
	if body.ChatID == 0 {
		body.ChatID = body.UserID
	}
	if body.Label != "" {
		id, data, ok := s.buttonLabelled(body.ChatID, body.MessageID, body.Label)
		if !ok {
			writeControl(w, http.StatusNotFound, controlError{fmt.Sprintf("no bot message in chat %d has a %q button; GET /control/messages?chat_id=%d lists them", body.ChatID, body.Label, body.ChatID)})
			return
		}
		body.MessageID, body.Data = id, data
	}
	if body.MessageID <= 0 {
		writeControl(w, http.StatusBadRequest, controlError{`press by "data" needs the "message_id" carrying the button`})
		return
	}
	id := s.PressButton(body.ChatID, body.UserID, body.MessageID, body.Data)
	writeControl(w, http.StatusOK, controlUpdate{UpdateID: id})
}

// buttonLabelled finds the button labelled label on message id of chat,
// or on the newest bot message there that has one when id is 0.
func (s *Server) buttonLabelled(chat int64, id int, label string) (messageID int, data string, ok bool) {
	msgs := s.Messages(chat)
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		if id != 0 && m.ID != id {
			continue
		}
		for _, row := range m.Buttons {
			for _, b := range row {
				if b.Text == label && b.CallbackData != "" {
					return m.ID, b.CallbackData, true
				}
			}
		}
	}
	return 0, "", false
}

func (s *Server) controlMessages(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	chat, err := strconv.ParseInt(q.Get("chat_id"), 10, 64)
	if err != nil || chat == 0 {
		writeControl(w, http.StatusBadRequest, controlError{"messages needs ?chat_id=N"})
		return
	}
	after, wait := 0, time.Duration(0)
	if v := q.Get("after"); v != "" {
		if after, err = strconv.Atoi(v); err != nil {
			writeControl(w, http.StatusBadRequest, controlError{"after must be a message id"})
			return
		}
	}
	if v := q.Get("wait"); v != "" {
		if wait, err = time.ParseDuration(v); err != nil || wait < 0 || wait > maxControlWait {
			writeControl(w, http.StatusBadRequest, controlError{"wait must be a duration up to 60s, e.g. 10s"})
			return
		}
	}
	ctx, cancel := context.WithTimeout(r.Context(), wait)
	defer cancel()
	writeControl(w, http.StatusOK, s.messagesAfter(ctx, chat, after, q.Get("contains")))
}

// messagesAfter returns the bot's messages in chat with an id above after
// and text containing contains, waiting until there is one or ctx ends.
func (s *Server) messagesAfter(ctx context.Context, chat int64, after int, contains string) []ControlMessage {
	for {
		s.mu.Lock()
		msgs, changed := s.messagesLocked(chat), s.changed
		s.mu.Unlock()
		out := []ControlMessage{}
		for _, m := range msgs {
			if m.ID > after && strings.Contains(m.Visible, contains) {
				out = append(out, ControlMessage{ID: m.ID, Text: m.Visible, Buttons: m.Buttons, Edits: m.Edits, ReplyTo: m.ReplyTo})
			}
		}
		if len(out) > 0 {
			return out
		}
		select {
		case <-ctx.Done():
			return out
		case <-s.done:
			return out
		case <-changed:
		}
	}
}

// readControl decodes a control request's JSON body, answering 400 when
// it is not exactly the expected object.
func readControl(w http.ResponseWriter, r *http.Request, dst any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	if err := dec.Decode(dst); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeControl(w, http.StatusRequestEntityTooLarge, controlError{"the body is over 64 KiB"})
			return false
		}
		writeControl(w, http.StatusBadRequest, controlError{"the body must be a JSON object: " + err.Error()})
		return false
	}
	return true
}

func writeControl(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// loopbackClient reports whether r comes from this machine.
func loopbackClient(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
