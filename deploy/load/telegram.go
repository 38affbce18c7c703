package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// telegram is the Telegram side of a run: the lean fake below, or
// telegramtest's full one with -telegram full.
type telegram interface {
	// URL returns the base URL the daemon's telegram.api_url takes.
	URL() string
	// SendText delivers a text message from user (named name) in the
	// private chat chat.
	SendText(chat, user int64, name, text string)
	// Watch calls f with the text of every message the bot sends, as the
	// fake accepts it; f must be quick.
	Watch(f func(text string))
	// complaints returns how many calls the fake could not answer and why
	// it refused the last.
	complaints() (int, string)
	// Close stops the server, ending pending long polls.
	Close()
}

// fullTelegram is telegramtest's Bot API fake, which checks every call in
// full (HTML, keyboards, edits) and keeps every message.
type fullTelegram struct{ *telegramtest.Server }

func (t fullTelegram) SendText(chat, user int64, name, text string) {
	t.Server.SendText(chat, user, name, text)
}

func (t fullTelegram) Watch(f func(string)) {
	t.Server.Watch(func(m telegramtest.Message) { f(m.Visible) })
}

func (fullTelegram) complaints() (int, string) { return 0, "" }

// leanTelegram is the Telegram fake a load run talks to unless -telegram
// full is given: just the Bot API calls a daemon makes while it answers
// private messages (getMe, deleteWebhook, setMyCommands, getUpdates,
// sendMessage, sendMessageDraft (a streamed answer, default), sendChatAction,
// editMessageText, deleteMessage), answered
// with the same JSON telegramtest's fake returns, but read and written with
// a few byte searches and appends. telegramtest parses every form with
// mime/multipart, renders every answer from maps with encoding/json and
// keeps every update and message of the run, for the checks tests make;
// under load that work and the heap it keeps take CPU from the cores the
// daemon is measured on. This one keeps only the updates not yet confirmed.
//
// It relies on the Bot API library's multipart forms. A call it cannot
// read, or a method it does not serve, is answered with HTTP 400 and
// counted, and the run reports it.
type leanTelegram struct {
	ts    *httptest.Server
	token string
	botID int64
	done  chan struct{}
	once  sync.Once

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when an update is queued
	queue   []leanUpdate  // unconfirmed updates, by id
	nextUpd int64
	nextMsg int64 // message ids, one sequence for all chats
	watch   func(string)
	refused refusals
}

// leanUpdate is a queued update, already encoded.
type leanUpdate struct {
	id   int64
	body []byte
}

// newLeanTelegram serves the fake for token on a loopback port.
func newLeanTelegram(token string) *leanTelegram {
	t := &leanTelegram{token: token, botID: botID(token), done: make(chan struct{}), changed: make(chan struct{})}
	t.ts = httptest.NewServer(t)
	return t
}

// botID is the number before the colon of a bot token.
func botID(token string) int64 {
	id, _ := strconv.ParseInt(strings.SplitN(token, ":", 2)[0], 10, 64)
	return id
}

func (t *leanTelegram) URL() string { return t.ts.URL }

func (t *leanTelegram) Close() {
	t.once.Do(func() { close(t.done) })
	t.ts.CloseClientConnections()
	t.ts.Close()
}

func (t *leanTelegram) Watch(f func(string)) {
	t.mu.Lock()
	t.watch = f
	t.mu.Unlock()
}

func (t *leanTelegram) complaints() (int, string) { return t.refused.complaints() }

func (t *leanTelegram) SendText(chat, user int64, name, text string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.nextUpd++
	t.nextMsg++
	b := make([]byte, 0, 192+len(name)+len(text))
	b = append(b, `{"update_id":`...)
	b = strconv.AppendInt(b, t.nextUpd, 10)
	b = append(b, `,"message":{"message_id":`...)
	b = strconv.AppendInt(b, t.nextMsg, 10)
	b = append(b, `,"date":`...)
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = appendChat(b, chat)
	b = append(b, `,"from":{"id":`...)
	b = strconv.AppendInt(b, user, 10)
	b = append(b, `,"is_bot":false,"first_name":`...)
	b = appendString(b, name)
	b = append(b, `},"text":`...)
	b = appendString(b, text)
	b = append(b, "}}"...)
	t.queue = append(t.queue, leanUpdate{id: t.nextUpd, body: b})
	close(t.changed)
	t.changed = make(chan struct{})
}

// appendChat appends a private chat's "chat" member.
func appendChat(b []byte, chat int64) []byte {
	b = append(b, `,"chat":{"id":`...)
	b = strconv.AppendInt(b, chat, 10)
	return append(b, `,"type":"private","first_name":"Chat"}`...)
}

// appendString appends s as a JSON string.
func appendString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always encodes
	return append(b, q...)
}

func (t *leanTelegram) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	method, ok := strings.CutPrefix(r.URL.Path, "/bot"+t.token+"/")
	if !ok {
		t.refuse(w, http.StatusNotFound, "Not Found: load's Telegram fake serves /bot<its token>/<method> only, not "+r.URL.Path)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxForm+1))
	if err != nil {
		return // the daemon hung up (a poll it gave up on): nothing to answer
	}
	form, err := readForm(r.Header.Get("Content-Type"), body)
	if err != nil {
		t.refuse(w, http.StatusBadRequest, method+": "+err.Error())
		return
	}
	switch method {
	case "getMe":
		t.result(w, []byte(`{"id":`+strconv.FormatInt(t.botID, 10)+`,"is_bot":true,"first_name":"Switchboard Test","username":"switchboard_test_bot","can_join_groups":true,"can_read_all_group_messages":false,"supports_inline_queries":false}`))
	case "deleteWebhook", "setMyCommands", "sendChatAction", "deleteMessage", "sendMessageDraft":
		t.result(w, []byte("true"))
	case "getUpdates":
		t.getUpdates(w, r, form)
	case "sendMessage", "editMessageText":
		t.sendMessage(w, method, form)
	default:
		t.refuse(w, http.StatusBadRequest, "load's Telegram fake does not serve "+method+" (run with -telegram full)")
	}
}

// getUpdates confirms the updates below offset and returns up to limit
// (100) of the rest, waiting up to timeout seconds for one.
func (t *leanTelegram) getUpdates(w http.ResponseWriter, r *http.Request, form map[string]string) {
	offset, _ := strconv.ParseInt(form["offset"], 10, 64)
	timeout, _ := strconv.Atoi(form["timeout"])
	limit, _ := strconv.Atoi(form["limit"])
	if limit <= 0 || limit > 100 {
		limit = 100
	}
	var wait *time.Timer
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	t.mu.Lock()
	for {
		i := 0
		for i < len(t.queue) && t.queue[i].id < offset {
			i++
		}
		t.queue = t.queue[i:]
		if len(t.queue) > 0 || timeout <= 0 {
			out := []byte(`{"ok":true,"result":[`)
			for i, u := range t.queue[:min(limit, len(t.queue))] {
				if i > 0 {
					out = append(out, ',')
				}
				out = append(out, u.body...)
			}
			t.mu.Unlock()
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(append(out, "]}\n"...))
			return
		}
		changed := t.changed
		t.mu.Unlock()
		if wait == nil {
			wait = time.NewTimer(time.Duration(timeout) * time.Second)
		}
		select {
		case <-changed:
		case <-wait.C:
			timeout = 0
		case <-r.Context().Done():
			return
		case <-t.done:
			return
		}
		t.mu.Lock()
	}
}

// sendMessage accepts a message (or an edit of one) and answers it as the
// Bot API does; the watcher learns its text.
func (t *leanTelegram) sendMessage(w http.ResponseWriter, method string, form map[string]string) {
	chat, err := strconv.ParseInt(form["chat_id"], 10, 64)
	if err != nil {
		t.refuse(w, http.StatusBadRequest, method+": chat_id "+strconv.Quote(form["chat_id"])+" is not a number")
		return
	}
	text := form["text"]
	if text == "" {
		t.refuse(w, http.StatusBadRequest, "Bad Request: message text is empty")
		return
	}
	t.mu.Lock()
	id := form["message_id"] // an edit keeps its message's id
	if method == "sendMessage" {
		t.nextMsg++
		id = strconv.FormatInt(t.nextMsg, 10)
	}
	watch := t.watch
	t.mu.Unlock()
	if method == "sendMessage" && watch != nil {
		watch(text)
	}
	b := make([]byte, 0, 256+len(text))
	b = append(b, `{"message_id":`...)
	b = append(b, id...)
	b = append(b, `,"date":`...)
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = appendChat(b, chat)
	b = append(b, `,"from":{"id":`...)
	b = strconv.AppendInt(b, t.botID, 10)
	b = append(b, `,"is_bot":true,"first_name":"Switchboard Test","username":"switchboard_test_bot"},"text":`...)
	b = appendString(b, text)
	t.result(w, append(b, '}'))
}

// result writes a successful answer carrying result, encoded JSON.
func (t *leanTelegram) result(w http.ResponseWriter, result []byte) {
	w.Header().Set("Content-Type", "application/json")
	out := make([]byte, 0, len(result)+24)
	out = append(out, `{"ok":true,"result":`...)
	out = append(out, result...)
	_, _ = w.Write(append(out, "}\n"...))
}

// refuse answers a Bot API error and counts it.
func (t *leanTelegram) refuse(w http.ResponseWriter, status int, desc string) {
	t.refused.refuse(w, status, desc, map[string]any{"ok": false, "error_code": status, "description": desc})
}

// maxForm bounds a call's body the fake reads.
const maxForm = 1 << 20

// readForm reads the fields of a call's multipart form, body, sent with
// Content-Type ct (none for an empty body). Each part is
// `Content-Disposition: form-data; name="…"` and a blank line before its
// value; the boundary (random, from ct) cannot occur in a value, so
// cutting at it finds every value whole.
func readForm(ct string, body []byte) (map[string]string, error) {
	if len(body) > maxForm {
		return nil, fmt.Errorf("the call is larger than the fake reads (%d bytes)", maxForm)
	}
	form := map[string]string{}
	if len(bytes.TrimSpace(body)) == 0 {
		return form, nil
	}
	boundary, ok := strings.CutPrefix(ct, "multipart/form-data; boundary=")
	if !ok { // not as the library writes it: read it in full
		mediaType, params, err := mime.ParseMediaType(ct)
		if err != nil || mediaType != "multipart/form-data" {
			return nil, fmt.Errorf("the fake reads multipart forms only, not Content-Type %q", ct)
		}
		boundary = params["boundary"]
	}
	if boundary == "" {
		return nil, fmt.Errorf("Content-Type %q names no boundary", ct)
	}
	delim := []byte("--" + boundary)
	parts := bytes.Split(body, delim)
	if len(parts) < 2 || !bytes.HasPrefix(parts[len(parts)-1], []byte("--")) {
		return nil, fmt.Errorf("the form does not end with its boundary")
	}
	for _, part := range parts[1 : len(parts)-1] {
		head, value, ok := bytes.Cut(part, []byte("\r\n\r\n"))
		_, name, named := bytes.Cut(head, []byte(`name="`))
		name, _, closed := bytes.Cut(name, []byte(`"`))
		if !ok || !named || !closed || !bytes.HasSuffix(value, []byte("\r\n")) {
			return nil, fmt.Errorf("a form part the fake cannot read: %.80q", part)
		}
		form[string(name)] = string(value[:len(value)-2])
	}
	return form, nil
}
