// Package telegramtest provides a fake Telegram Bot API server for tests: an
// in-process httptest server that the real github.com/go-telegram/bot client
// works against unchanged. It long-polls getUpdates with Telegram's offset
// semantics, records what the bot sends, serves the files a test registers
// (getFile and their downloads), validates requests the way Telegram
// does where that is cheap (message length, HTML entities, callback data) and
// can inject failures such as 429 Too Many Requests.
package telegramtest

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// Server is a fake Telegram Bot API. All methods are safe for concurrent use.
type Server struct {
	token string
	botID int64
	srv   *httptest.Server
	done  chan struct{}
	once  sync.Once

	mu        sync.Mutex
	changed   chan struct{} // closed and replaced on every state change
	nextUpd   int64
	queue     []update // unconfirmed updates, by id
	forced    []update // redeliveries, returned by the next getUpdates
	history   map[int64]update
	poller    int64 // generation of the newest getUpdates call
	chats     map[int64]*chat
	users     map[int64]string
	callbacks map[string]*callbackQuery
	nextCB    int
	answers   []CallbackAnswer
	commands  []Command
	failures  map[string][]Failure
	holds     map[string]chan struct{} // Hold's, by method; closed on release
	requests  map[string]int
	offline   bool
	conns     int // TCP connections accepted
	topics    []Topic
	wh        webhookState
	watch     func(Message) // Watch's f, nil if none
	flood     floodState
	files     map[string]storedFile         // AddFile's, by file id
	uploads   []Upload                      // files the bot sent
	stalls    map[string]*channeltest.Stall // StallUpload's, by method
	removed   map[string]bool               // RemoveMethod's, lower case
}

// NewServer starts a fake Bot API that accepts token. The bot's user id is
// the number before the colon in token, as with real tokens.
func NewServer(token string) *Server {
	s := &Server{
		token:     token,
		botID:     botIDFromToken(token),
		done:      make(chan struct{}),
		changed:   make(chan struct{}),
		history:   map[int64]update{},
		chats:     map[int64]*chat{},
		users:     map[int64]string{},
		callbacks: map[string]*callbackQuery{},
		failures:  map[string][]Failure{},
		holds:     map[string]chan struct{}{},
		requests:  map[string]int{},
	}
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serveHTTP))
	s.srv.Config.ConnState = func(_ net.Conn, state http.ConnState) {
		if state == http.StateNew {
			s.mu.Lock()
			s.conns++
			s.mu.Unlock()
		}
	}
	s.srv.Start()
	return s
}

// Connections returns how many TCP connections clients have opened to the
// server so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conns
}

func botIDFromToken(token string) int64 {
	id, err := strconv.ParseInt(strings.SplitN(token, ":", 2)[0], 10, 64)
	if err != nil || id <= 0 {
		return 1000
	}
	return id
}

// URL returns the server's base URL, for bot.WithServerURL.
func (s *Server) URL() string { return s.srv.URL }

// BotID returns the bot's user id.
func (s *Server) BotID() int64 { return s.botID }

// Close stops the server, ending pending long polls first.
func (s *Server) Close() {
	s.once.Do(func() { close(s.done) })
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// notifyLocked wakes everyone waiting for a change. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Failure is an error the server returns instead of handling a call.
type Failure struct {
	Status      int    // HTTP status and error_code, e.g. 429, 400, 403, 500
	RetryAfter  int    // seconds, sent as parameters.retry_after (429)
	Times       int    // how many calls fail; at least 1
	Description string // defaults to Telegram's text for Status
}

// Fail makes the next times calls of method fail with status; for 429 the
// response carries parameters.retry_after = retryAfter.
func (s *Server) Fail(method string, status, retryAfter, times int) {
	s.FailWith(method, Failure{Status: status, RetryAfter: retryAfter, Times: times})
}

// FailWith makes the next f.Times calls of method fail as f describes.
func (s *Server) FailWith(method string, f Failure) {
	f.Times = max(f.Times, 1)
	if f.Description == "" {
		f.Description = defaultDescription(f.Status, f.RetryAfter)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := strings.ToLower(method)
	s.failures[m] = append(s.failures[m], f)
}

func defaultDescription(status, retryAfter int) string {
	switch status {
	case http.StatusTooManyRequests:
		return "Too Many Requests: retry after " + strconv.Itoa(retryAfter)
	case http.StatusBadRequest:
		return "Bad Request: injected failure"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusForbidden:
		return "Forbidden: bot was blocked by the user"
	case http.StatusNotFound:
		return "Not Found"
	case http.StatusConflict:
		return "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	}
	return "Internal Server Error"
}

// SetOffline makes the server drop every connection without an answer (as
// an unreachable network does) while offline is true.
func (s *Server) SetOffline(offline bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offline = offline
}

// LongPolls returns how many getUpdates calls have begun polling (a call
// is counted by Requests as soon as it arrives, before it polls).
func (s *Server) LongPolls() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.poller
}

// Requests returns how many calls of method (any case) the server received.
func (s *Server) Requests(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[strings.ToLower(method)]
}

// WaitRequests waits until the server received at least n calls of method.
func (s *Server) WaitRequests(ctx context.Context, method string, n int) error {
	m := strings.ToLower(method)
	for {
		s.mu.Lock()
		got, ch := s.requests[m], s.changed
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

// handler serves one Bot API method.
type handler func(s *Server, p params) (result any, err *apiError)

var handlers = map[string]handler{
	"getme":                  (*Server).getMe,
	"getupdates":             nil, // long poll, served by serveGetUpdates
	"deletewebhook":          (*Server).deleteWebhook,
	"setwebhook":             (*Server).setWebhook,
	"getwebhookinfo":         (*Server).getWebhookInfo,
	"sendmessage":            (*Server).sendMessage,
	"sendmessagedraft":       (*Server).sendMessageDraft,
	"editmessagetext":        (*Server).editMessageText,
	"editmessagereplymarkup": (*Server).editMessageReplyMarkup,
	"deletemessage":          (*Server).deleteMessage,
	"answercallbackquery":    (*Server).answerCallbackQuery,
	"sendchataction":         (*Server).sendChatAction,
	"setmycommands":          (*Server).setMyCommands,
	"getmycommands":          (*Server).getMyCommands,
	"createforumtopic":       (*Server).createForumTopic,
	"getfile":                (*Server).getFile,
	"sendphoto":              nil, // uploads, served by sendUpload
	"sendvoice":              nil,
	"senddocument":           nil,
}

// apiError is a Bot API error response.
type apiError struct {
	status     int
	desc       string
	retryAfter int
}

func badRequest(desc string) *apiError {
	return &apiError{status: http.StatusBadRequest, desc: "Bad Request: " + desc}
}

func (s *Server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if rest, ok := strings.CutPrefix(r.URL.Path, "/file/bot"); ok {
		s.serveFile(w, r, rest)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	if !ok {
		writeError(w, &apiError{status: http.StatusNotFound, desc: "Not Found"})
		return
	}
	token, method, ok := strings.Cut(rest, "/")
	method = strings.ToLower(method)

	s.mu.Lock()
	s.requests[method]++
	offline := s.offline
	s.notifyLocked()
	s.mu.Unlock()

	if offline {
		dropConnection(w)
		return
	}
	if !ok || token != s.token {
		writeError(w, &apiError{status: http.StatusUnauthorized, desc: "Unauthorized"})
		return
	}
	h, known := handlers[method]
	if !known || s.removedMethod(method) {
		writeError(w, &apiError{status: http.StatusNotFound, desc: "Not Found"})
		return
	}
	var up *upload
	var p params
	var err error
	if uploadField[method] != "" {
		p, up, err = parseUpload(r, s.takeStall(method), s.done)
	} else {
		p, err = parseParams(r)
	}
	if err != nil {
		writeError(w, badRequest(err.Error()))
		return
	}
	if f := s.takeFailure(method); f != nil {
		writeError(w, f)
		return
	}
	if f := s.floodFailure(method, p); f != nil {
		writeError(w, f)
		return
	}
	s.mu.Lock()
	held := s.holds[method]
	s.mu.Unlock()
	if held != nil {
		select {
		case <-held:
		case <-s.done:
			return
		case <-r.Context().Done():
			return
		}
	}
	if method == "getupdates" {
		s.serveGetUpdates(w, r, p)
		return
	}
	var result any
	var apiErr *apiError
	if uploadField[method] != "" {
		result, apiErr = s.sendUpload(method, p, up)
	} else {
		result, apiErr = h(s, p)
	}
	if apiErr != nil {
		writeError(w, apiErr)
		return
	}
	writeResult(w, result)
}

// Hold makes calls of method wait, unanswered, until release is called, the
// call is cancelled or the server closes: a Bot API slow to answer that
// method. Calls made after release are answered at once. release may be
// called more than once.
func (s *Server) Hold(method string) (release func()) {
	m := strings.ToLower(method)
	held := make(chan struct{})
	s.mu.Lock()
	s.holds[m] = held
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			if s.holds[m] == held {
				delete(s.holds, m)
			}
			s.mu.Unlock()
			close(held)
		})
	}
}

// takeFailure consumes one injected failure for method, if any.
func (s *Server) takeFailure(method string) *apiError {
	s.mu.Lock()
	defer s.mu.Unlock()
	fs := s.failures[method]
	if len(fs) == 0 {
		return nil
	}
	f := fs[0]
	if fs[0].Times--; fs[0].Times <= 0 {
		s.failures[method] = fs[1:]
	}
	return &apiError{status: f.Status, desc: f.Description, retryAfter: f.RetryAfter}
}

// dropConnection closes the client's connection without a response.
func dropConnection(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic("telegramtest: response writer cannot hijack")
	}
	conn, _, err := hj.Hijack()
	if err == nil {
		_ = conn.Close()
	}
}

func writeResult(w http.ResponseWriter, result any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"ok": true, "result": result})
}

func writeError(w http.ResponseWriter, e *apiError) {
	body := map[string]any{"ok": false, "error_code": e.status, "description": e.desc}
	if e.retryAfter > 0 {
		body["parameters"] = map[string]any{"retry_after": e.retryAfter}
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(body)
}

func (s *Server) getMe(params) (any, *apiError) {
	return map[string]any{
		"id":                          s.botID,
		"is_bot":                      true,
		"first_name":                  "Switchboard Test",
		"username":                    BotUsername,
		"can_join_groups":             true,
		"can_read_all_group_messages": false,
		"supports_inline_queries":     false,
	}, nil
}

// now is the Unix time for message dates.
func now() int64 { return time.Now().Unix() }
