// Package discordtest provides a fake Discord for tests: an in-process
// httptest server with the REST routes a bot uses and a gateway websocket
// speaking Discord's protocol (Hello, Identify, Ready, heartbeats, Resume,
// dispatches), so the real github.com/bwmarrin/discordgo works against it
// unchanged. It records what the bot sends, validates requests the way
// Discord does where that is cheap (content length, components, custom_id
// length, interaction acknowledgement) and can inject failures such as 429
// Too Many Requests or a dropped gateway connection.
//
// Point a client at it by rewriting https://discord.com to URL() (the
// discord channel does this for Options.APIURL); GET /api/v9/gateway
// answers with the fake's own websocket URL.
package discordtest

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// BotID is the fake bot's user id, which is also its application id.
const BotID = "1100000000000000001"

// BotName is the fake bot's username.
const BotName = "switchboard-test"

// Routes name the REST calls for Fail, FailWith and Requests.
const (
	RouteGateway  = "GET /gateway"
	RouteMe       = "GET /users/@me"
	RouteApp      = "GET /applications/@me"
	RouteSend     = "POST /channels/{channel}/messages"
	RouteEdit     = "PATCH /channels/{channel}/messages/{message}"
	RouteDelete   = "DELETE /channels/{channel}/messages/{message}"
	RouteDM       = "POST /users/@me/channels"
	RouteTyping   = "POST /channels/{channel}/typing"
	RouteCallback = "POST /interactions/{id}/{token}/callback"
	RouteFollowup = "POST /webhooks/{application}/{token}"
)

// Discord's limits the server enforces.
const (
	MaxContent  = 2000 // characters of message content
	MaxCustomID = 100  // characters of a component's custom_id
	MaxLabel    = 80   // characters of a button label
	MaxRows     = 5    // action rows per message
	MaxButtons  = 5    // buttons per action row
)

// ackDeadline is how long after a press Discord accepts its first answer.
const ackDeadline = 3 * time.Second

// Server is a fake Discord. All methods are safe for concurrent use.
type Server struct {
	srv *httptest.Server
	wg  sync.WaitGroup // gateway connections

	mu           sync.Mutex
	changed      chan struct{} // closed and replaced on every state change
	closed       bool
	token        string // accepted token; "" accepts any
	nextID       uint64
	channels     map[string]*channel
	users        map[string]string // id → name
	dms          map[string]string // user id → DM channel id
	messages     map[string]*message
	order        []string // message ids in creation order
	deleted      []Message
	interactions map[string]*interaction
	responses    []InteractionResponse
	followups    []Followup
	typing       map[string]int
	failures     map[string][]Failure
	requests     map[string]int
	usedUp       map[string]time.Duration // route → reset-after its next answer reports
	cdn          map[string][]byte        // escaped path → content
	cdnRequests  []CDNRequest
	stall        *channeltest.Stall // StallUpload's, for the next upload
	done         chan struct{}      // closed by Close: stalled uploads fail

	// gateway
	sessions    map[string]*session
	conns       map[*gwConn]struct{}
	identifies  []Identify
	resumes     int
	gatewayDown bool
	rejected    int // intents that make Identify fail with 4014
	heartbeat   time.Duration
}

// NewServer starts a fake Discord that accepts any bot token until
// SetToken says otherwise.
func NewServer() *Server {
	s := &Server{
		changed:      make(chan struct{}),
		done:         make(chan struct{}),
		nextID:       1200000000000000000,
		channels:     map[string]*channel{},
		users:        map[string]string{BotID: BotName},
		dms:          map[string]string{},
		messages:     map[string]*message{},
		interactions: map[string]*interaction{},
		typing:       map[string]int{},
		failures:     map[string][]Failure{},
		requests:     map[string]int{},
		usedUp:       map[string]time.Duration{},
		cdn:          map[string][]byte{},
		sessions:     map[string]*session{},
		conns:        map[*gwConn]struct{}{},
		heartbeat:    41250 * time.Millisecond,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/{version}/gateway", s.route(RouteGateway, true, s.getGateway))
	mux.HandleFunc("GET /api/{version}/gateway/bot", s.route(RouteGateway, true, s.getGateway))
	mux.HandleFunc("GET /api/{version}/users/@me", s.route(RouteMe, true, s.getMe))
	mux.HandleFunc("GET /api/{version}/applications/@me", s.route(RouteApp, true, s.getApp))
	mux.HandleFunc("POST /api/{version}/channels/{channel}/messages", s.route(RouteSend, true, s.postMessage))
	mux.HandleFunc("PATCH /api/{version}/channels/{channel}/messages/{message}", s.route(RouteEdit, true, s.patchMessage))
	mux.HandleFunc("DELETE /api/{version}/channels/{channel}/messages/{message}", s.route(RouteDelete, true, s.deleteMessage))
	mux.HandleFunc("POST /api/{version}/users/@me/channels", s.route(RouteDM, true, s.postDM))
	mux.HandleFunc("POST /api/{version}/channels/{channel}/typing", s.route(RouteTyping, true, s.postTyping))
	mux.HandleFunc("POST /api/{version}/interactions/{id}/{token}/callback", s.route(RouteCallback, false, s.postCallback))
	mux.HandleFunc("POST /api/{version}/webhooks/{application}/{token}", s.route(RouteFollowup, false, s.postFollowup))
	mux.HandleFunc("GET /attachments/{channel}/{attachment}/{filename}", s.recordCDN(s.route(RouteCDN, false, s.getAttachment)))
	mux.HandleFunc("GET /ws/", s.serveGateway)
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		writeError(w, http.StatusNotFound, 0, "404: Not Found")
	})
	s.srv = httptest.NewServer(mux)
	return s
}

// URL returns the server's base URL, to use as the discord channel's
// APIURL.
func (s *Server) URL() string { return s.srv.URL }

// Close drops every gateway connection and stops the server.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	for c := range s.conns {
		c.drop()
	}
	s.mu.Unlock()
	s.srv.CloseClientConnections()
	s.srv.Close()
	s.wg.Wait()
}

// SetToken makes the server accept only token (with or without "Bot "):
// other tokens get 401 from the REST API and close code 4004 from the
// gateway.
func (s *Server) SetToken(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.token = strings.TrimPrefix(token, "Bot ")
}

// notifyLocked wakes everyone waiting for a change. s.mu must be held.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// waitFor blocks until cond (called with s.mu held) is true or ctx ends.
func (s *Server) waitFor(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ok := cond()
		changed := s.changed
		s.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

// newIDLocked returns a fresh snowflake. s.mu must be held.
func (s *Server) newIDLocked() string {
	s.nextID++
	return strconv.FormatUint(s.nextID, 10)
}

// Requests returns how many calls route received, failed ones included.
func (s *Server) Requests(route string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[route]
}

// WaitRequests waits until route has received at least n calls.
func (s *Server) WaitRequests(ctx context.Context, route string, n int) error {
	return s.waitFor(ctx, func() bool { return s.requests[route] >= n })
}

// route wraps a REST handler: it counts the call, checks the bot token when
// auth is set, and serves an injected failure instead when one is queued.
func (s *Server) route(name string, auth bool, h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests[name]++
		s.notifyLocked()
		authed := !auth || s.authorizedLocked(r.Header.Get("Authorization"))
		var fail *Failure
		if q := s.failures[name]; authed && len(q) > 0 {
			f := q[0]
			fail = &f
			if q[0].Times--; q[0].Times <= 0 {
				s.failures[name] = q[1:]
			}
		}
		resetAfter, usedUp := s.usedUp[name]
		if usedUp && fail == nil && authed {
			delete(s.usedUp, name)
		}
		s.mu.Unlock()
		if usedUp && fail == nil && authed {
			w.Header().Set("X-RateLimit-Remaining", "0")
			w.Header().Set("X-RateLimit-Reset-After", strconv.FormatFloat(resetAfter.Seconds(), 'f', 3, 64))
		}
		switch {
		case !authed:
			writeError(w, http.StatusUnauthorized, 0, "401: Unauthorized")
		case fail != nil:
			writeFailure(w, *fail)
		default:
			h(w, r)
		}
	}
}

// authorizedLocked checks an Authorization header. s.mu must be held.
func (s *Server) authorizedLocked(header string) bool {
	token, ok := strings.CutPrefix(header, "Bot ")
	return ok && token != "" && (s.token == "" || token == s.token)
}

// writeError writes {"code": code, "message": msg} with status.
func writeError(w http.ResponseWriter, status, code int, msg string) {
	writeJSON(w, status, map[string]any{"code": code, "message": msg})
}

// writeFormError writes a 400 Invalid Form Body naming the field at fault.
func writeFormError(w http.ResponseWriter, field, code, msg string) {
	writeJSON(w, http.StatusBadRequest, map[string]any{
		"code":    50035,
		"message": "Invalid Form Body",
		"errors":  map[string]any{field: map[string]any{"_errors": []any{map[string]any{"code": code, "message": msg}}}},
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// getGateway serves GET /gateway and /gateway/bot.
func (s *Server) getGateway(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"url":    s.gatewayURL(),
		"shards": 1,
		"session_start_limit": map[string]any{
			"total": 1000, "remaining": 999, "reset_after": 0, "max_concurrency": 1,
		},
	})
}

// gatewayURL is the websocket URL of the fake gateway.
func (s *Server) gatewayURL() string { return "ws" + strings.TrimPrefix(s.srv.URL, "http") + "/ws" }

// getMe serves GET /users/@me.
func (s *Server) getMe(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, botUser())
}

// getApp serves GET /applications/@me. Its flags say the Message Content
// intent is enabled unless RejectIntents rejects it.
func (s *Server) getApp(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	flags := 1 << 19 // GATEWAY_MESSAGE_CONTENT_LIMITED
	if s.rejected&(1<<15) != 0 {
		flags = 0
	}
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{"id": BotID, "name": BotName, "flags": flags, "bot_public": false})
}

// botUser is the bot's user object.
func botUser() map[string]any {
	return map[string]any{"id": BotID, "username": BotName, "discriminator": "0", "global_name": nil, "bot": true}
}

// userObject is a person's user object.
func userObject(id, name string) map[string]any {
	return map[string]any{"id": id, "username": name, "discriminator": "0", "global_name": name, "bot": false}
}

// nameLocked returns a user's name. s.mu must be held.
func (s *Server) nameLocked(id string) string {
	if n, ok := s.users[id]; ok {
		return n
	}
	return "user" + id
}

// AddUser registers a user the bot can open a direct-message channel with,
// without the user writing first.
func (s *Server) AddUser(id, name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users[id] = name
}

// AddChannel registers a guild channel (or, with guildID empty, a DM
// channel) the bot can post to before anyone writes there.
func (s *Server) AddChannel(channelID, guildID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.channelLocked(channelID, guildID, "")
}

// DMChannel returns the DM channel id of userID, "" when none is open.
func (s *Server) DMChannel(userID string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dms[userID]
}

// channel is a text channel, thread or DM.
type channel struct {
	id, guildID string
	dmUser      string // DM channels: the other user
}

// channelLocked returns the channel id, creating it when unknown. s.mu
// must be held.
func (s *Server) channelLocked(id, guildID, dmUser string) *channel {
	if ch, ok := s.channels[id]; ok {
		return ch
	}
	ch := &channel{id: id, guildID: guildID, dmUser: dmUser}
	s.channels[id] = ch
	if guildID == "" && dmUser != "" {
		s.dms[dmUser] = id
	}
	return ch
}

// postDM serves POST /users/@me/channels: open (or find) a DM channel.
func (s *Server) postDM(w http.ResponseWriter, r *http.Request) {
	var body struct {
		RecipientID string `json:"recipient_id"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.RecipientID == "" {
		writeFormError(w, "recipient_id", "BASE_TYPE_REQUIRED", "This field is required")
		return
	}
	s.mu.Lock()
	name, known := s.users[body.RecipientID]
	if !known || body.RecipientID == BotID {
		s.mu.Unlock()
		writeError(w, http.StatusNotFound, 10013, "Unknown User")
		return
	}
	id, ok := s.dms[body.RecipientID]
	if !ok {
		id = s.newIDLocked()
		s.channelLocked(id, "", body.RecipientID)
	}
	s.notifyLocked()
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"id": id, "type": 1, "recipients": []any{userObject(body.RecipientID, name)},
	})
}

// postTyping serves POST /channels/{channel}/typing.
func (s *Server) postTyping(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("channel")
	s.mu.Lock()
	_, ok := s.channels[id]
	if ok {
		s.typing[id]++
		s.notifyLocked()
	}
	s.mu.Unlock()
	if !ok {
		writeError(w, http.StatusNotFound, 10003, "Unknown Channel")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// Typing returns how often the bot showed "typing…" in channelID.
func (s *Server) Typing(channelID string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.typing[channelID]
}

// timestamp formats t the way Discord does.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000000+00:00") }
