package discordtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	guild = "300000000000000001"
	chanA = "300000000000000002"
	user  = "400000000000000001"
)

// call makes a REST call with the bot token and returns the status and the
// decoded JSON body (nil for none).
func call(t *testing.T, s *Server, method, path string, body any) (int, map[string]any) {
	t.Helper()
	var r io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		r = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, s.URL()+"/api/v9"+path, r)
	req.Header.Set("Authorization", "Bot tok")
	req.Header.Set("Content-Type", "application/json")
	return do(t, req)
}

func do(t *testing.T, req *http.Request) (int, map[string]any) {
	t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	data, _ := io.ReadAll(resp.Body)
	if len(data) > 0 {
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatalf("%s %s: body %q is not a JSON object", req.Method, req.URL.Path, data)
		}
	}
	return resp.StatusCode, out
}

func code(body map[string]any) int {
	c, _ := body["code"].(float64)
	return int(c)
}

func newServer(t *testing.T) *Server {
	t.Helper()
	s := NewServer()
	t.Cleanup(s.Close)
	return s
}

func TestCreateMessageValidation(t *testing.T) {
	s := newServer(t)
	s.AddChannel(chanA, guild)
	button := func(id string) map[string]any {
		return map[string]any{"type": 2, "style": 1, "label": "L", "custom_id": id}
	}
	row := func(bs ...any) []any { return []any{map[string]any{"type": 1, "components": bs}} }
	tests := []struct {
		name   string
		path   string
		body   map[string]any
		status int
		code   int
	}{
		{"too long", "/channels/" + chanA + "/messages", map[string]any{"content": strings.Repeat("é", 2001)}, 400, 50035},
		{"empty", "/channels/" + chanA + "/messages", map[string]any{"content": " "}, 400, 50006},
		{"custom id too long", "/channels/" + chanA + "/messages", map[string]any{"content": "x", "components": row(button(strings.Repeat("c", 101)))}, 400, 50035},
		{"duplicate custom id", "/channels/" + chanA + "/messages", map[string]any{"content": "x", "components": row(button("a"), button("a"))}, 400, 50035},
		{"six buttons in a row", "/channels/" + chanA + "/messages", map[string]any{"content": "x", "components": row(button("1"), button("2"), button("3"), button("4"), button("5"), button("6"))}, 400, 50035},
		{"unknown reply", "/channels/" + chanA + "/messages", map[string]any{"content": "x", "message_reference": map[string]any{"message_id": "1"}}, 400, 50035},
		{"unknown channel", "/channels/999/messages", map[string]any{"content": "x"}, 404, 10003},
		{"2000 characters", "/channels/" + chanA + "/messages", map[string]any{"content": strings.Repeat("é", 2000)}, 200, 0},
		{"missing reply allowed", "/channels/" + chanA + "/messages", map[string]any{"content": "x", "message_reference": map[string]any{"message_id": "1", "fail_if_not_exists": false}}, 200, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, body := call(t, s, "POST", tt.path, tt.body)
			if status != tt.status || code(body) != tt.code {
				t.Errorf("status %d code %d (%v), want %d %d", status, code(body), body, tt.status, tt.code)
			}
		})
	}
	if got := len(s.Messages(chanA)); got != 2 {
		t.Errorf("%d messages stored, want the 2 valid ones", got)
	}
}

func TestCreateMessageMultipartAndEdit(t *testing.T) {
	s := newServer(t)
	s.AddChannel(chanA, guild)
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	_ = mw.WriteField("payload_json", `{"content":"with file","allowed_mentions":{"parse":[]},"components":[{"type":1,"components":[{"type":2,"style":1,"label":"Go","custom_id":"go"}]}]}`)
	fw, _ := mw.CreateFormFile("files[0]", "a.txt")
	_, _ = fw.Write([]byte("data"))
	_ = mw.Close()
	req, _ := http.NewRequest("POST", s.URL()+"/api/v9/channels/"+chanA+"/messages", &buf)
	req.Header.Set("Authorization", "Bot tok")
	req.Header.Set("Content-Type", mw.FormDataContentType())
	status, body := do(t, req)
	if status != 200 {
		t.Fatalf("multipart create: %d %v", status, body)
	}
	id, _ := body["id"].(string)
	m := s.Messages(chanA)[0]
	if !m.Multipart || m.Content != "with file" || !m.AllowedMentions.NoneAllowed() || len(m.Buttons) != 1 || m.Buttons[0][0].CustomID != "go" {
		t.Errorf("stored %+v", m)
	}

	status, _ = call(t, s, "PATCH", "/channels/"+chanA+"/messages/"+id, map[string]any{"content": "edited", "components": []any{}})
	if m := s.Messages(chanA)[0]; status != 200 || m.Content != "edited" || m.Buttons != nil || m.Edits != 1 {
		t.Errorf("edit: %d, %+v", status, m)
	}
	if status, body := call(t, s, "PATCH", "/channels/"+chanA+"/messages/1", map[string]any{"content": "x"}); status != 404 || code(body) != 10008 {
		t.Errorf("edit of an unknown message: %d %v", status, body)
	}
	userMsg := s.SendMessage(chanA, guild, user, "Ann", "mine")
	if status, body := call(t, s, "PATCH", "/channels/"+chanA+"/messages/"+userMsg, map[string]any{"content": "x"}); status != 403 || code(body) != 50005 {
		t.Errorf("edit of a user's message: %d %v", status, body)
	}
}

func TestAuthFailuresAndDirectMessages(t *testing.T) {
	s := newServer(t)
	req, _ := http.NewRequest("GET", s.URL()+"/api/v9/users/@me", nil)
	if status, _ := do(t, req); status != 401 {
		t.Errorf("no token: %d", status)
	}
	s.SetToken("Bot right")
	if status, _ := call(t, s, "GET", "/users/@me", nil); status != 401 {
		t.Errorf("wrong token: %d", status)
	}
	s.SetToken("")
	if status, body := call(t, s, "GET", "/users/@me", nil); status != 200 || body["id"] != BotID || body["bot"] != true {
		t.Errorf("me: %d %v", status, body)
	}

	if status, body := call(t, s, "POST", "/users/@me/channels", map[string]any{"recipient_id": user}); status != 404 || code(body) != 10013 {
		t.Errorf("DM with an unknown user: %d %v", status, body)
	}
	s.AddUser(user, "Ann")
	_, first := call(t, s, "POST", "/users/@me/channels", map[string]any{"recipient_id": user})
	_, again := call(t, s, "POST", "/users/@me/channels", map[string]any{"recipient_id": user})
	if first["id"] == nil || first["id"] != again["id"] || first["id"] != s.DMChannel(user) {
		t.Errorf("DM channels %v and %v, server says %q", first["id"], again["id"], s.DMChannel(user))
	}
}

func TestInjectedFailures(t *testing.T) {
	s := newServer(t)
	s.AddChannel(chanA, guild)
	s.Fail(RouteSend, 429, 1500*time.Millisecond, 2)
	req, _ := http.NewRequest("POST", s.URL()+"/api/v9/channels/"+chanA+"/messages", strings.NewReader(`{"content":"x"}`))
	req.Header.Set("Authorization", "Bot tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		RetryAfter float64 `json:"retry_after"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&body)
	_ = resp.Body.Close()
	if resp.StatusCode != 429 || body.RetryAfter != 1.5 || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("429: status %d, retry_after %v, header %q", resp.StatusCode, body.RetryAfter, resp.Header.Get("Retry-After"))
	}
	if status, _ := call(t, s, "POST", "/channels/"+chanA+"/messages", map[string]any{"content": "x"}); status != 429 {
		t.Errorf("second call: %d, want the second injected 429", status)
	}
	if status, _ := call(t, s, "POST", "/channels/"+chanA+"/messages", map[string]any{"content": "x"}); status != 200 {
		t.Errorf("third call: %d, want success", status)
	}
	s.Fail(RouteTyping, 403, 0, 1)
	if status, body := call(t, s, "POST", "/channels/"+chanA+"/typing", nil); status != 403 || code(body) != 50001 {
		t.Errorf("403: %d %v", status, body)
	}
	if got := s.Requests(RouteSend); got != 3 {
		t.Errorf("requests = %d", got)
	}
}

func TestInteractionCallbacks(t *testing.T) {
	s := newServer(t)
	s.AddChannel(chanA, guild)
	_, m := call(t, s, "POST", "/channels/"+chanA+"/messages", map[string]any{"content": "x"})
	iid := s.PressButton(chanA, m["id"].(string), user, "ok")
	s.mu.Lock()
	tok := s.interactions[iid].token
	s.mu.Unlock()

	follow := "/webhooks/" + BotID + "/" + tok + "?wait=true"
	if status, body := call(t, s, "POST", follow, map[string]any{"content": "early"}); status != 404 || code(body) != 10015 {
		t.Errorf("followup before the ack: %d %v", status, body)
	}
	if status, body := call(t, s, "POST", "/interactions/"+iid+"/wrong/callback", map[string]any{"type": 6}); status != 404 || code(body) != 10062 {
		t.Errorf("callback with a wrong token: %d %v", status, body)
	}
	if status, _ := call(t, s, "POST", "/interactions/"+iid+"/"+tok+"/callback", map[string]any{"type": 6}); status != 204 {
		t.Errorf("callback: %d", status)
	}
	if status, body := call(t, s, "POST", "/interactions/"+iid+"/"+tok+"/callback", map[string]any{"type": 6}); status != 400 || code(body) != 40060 {
		t.Errorf("second callback: %d %v", status, body)
	}
	if status, body := call(t, s, "POST", follow, map[string]any{"content": "done", "flags": 64}); status != 200 || body["content"] != "done" {
		t.Errorf("followup: %d %v", status, body)
	}
	rs, fs := s.InteractionResponses(), s.Followups()
	if len(rs) != 1 || rs[0].InteractionID != iid || rs[0].Type != 6 {
		t.Errorf("responses = %+v", rs)
	}
	if len(fs) != 1 || fs[0].InteractionID != iid || fs[0].Flags != 64 || fs[0].Content != "done" {
		t.Errorf("followups = %+v", fs)
	}
}

// client is a raw gateway client.
type client struct {
	t  *testing.T
	ws *websocket.Conn
}

func dial(t *testing.T, s *Server) *client {
	t.Helper()
	ws, _, err := websocket.DefaultDialer.Dial(s.gatewayURL()+"/?v=9&encoding=json", nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ws.Close() })
	c := &client{t: t, ws: ws}
	if hello := c.read(); hello.Op != 10 || !strings.Contains(string(hello.D), `"heartbeat_interval":41250`) {
		t.Fatalf("first payload = %+v, want Hello", hello)
	}
	return c
}

func (c *client) send(op int, d any) {
	c.t.Helper()
	if err := c.ws.WriteJSON(map[string]any{"op": op, "d": d}); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) read() gwPayload {
	c.t.Helper()
	_ = c.ws.SetReadDeadline(time.Now().Add(10 * time.Second))
	var p gwPayload
	if err := c.ws.ReadJSON(&p); err != nil {
		c.t.Fatalf("read: %v", err)
	}
	return p
}

func (c *client) dispatch(want string) (gwPayload, map[string]any) {
	c.t.Helper()
	p := c.read()
	if p.Op != 0 || p.T == nil || *p.T != want || p.S == nil {
		c.t.Fatalf("payload = op %d t %v, want dispatch %s", p.Op, p.T, want)
	}
	var d map[string]any
	_ = json.Unmarshal(p.D, &d)
	return p, d
}

func TestGatewayIdentifyHeartbeatAndDispatch(t *testing.T) {
	s := newServer(t)
	c := dial(t, s)
	c.send(2, map[string]any{"token": "Bot tok", "intents": 37377})
	_, ready := c.dispatch("READY")
	if ready["session_id"] == "" || ready["resume_gateway_url"] != s.gatewayURL() || ready["user"].(map[string]any)["id"] != BotID {
		t.Errorf("READY = %v", ready)
	}
	c.send(1, 1)
	if ack := c.read(); ack.Op != 11 {
		t.Errorf("heartbeat answered with op %d", ack.Op)
	}
	id := s.SendMessage(chanA, guild, user, "Ann", "hi <@"+BotID+">")
	p, msg := c.dispatch("MESSAGE_CREATE")
	if *p.S != 2 || msg["id"] != id || msg["content"] != "hi <@"+BotID+">" || msg["guild_id"] != guild {
		t.Errorf("MESSAGE_CREATE seq %d = %v", *p.S, msg)
	}
	if ms := msg["mentions"].([]any); len(ms) != 1 || ms[0].(map[string]any)["id"] != BotID {
		t.Errorf("mentions = %v", ms)
	}
	if ids := s.Identifies(); len(ids) != 1 || ids[0].Intents != 37377 {
		t.Errorf("identifies = %+v", ids)
	}
}

func TestGatewayResume(t *testing.T) {
	s := newServer(t)
	c := dial(t, s)
	c.send(2, map[string]any{"token": "Bot tok", "intents": 1})
	_, ready := c.dispatch("READY")
	session := ready["session_id"]

	s.DropConnection()
	missed := s.SendMessage(chanA, guild, user, "Ann", "while away")
	c2 := dial(t, s)
	c2.send(6, map[string]any{"token": "Bot tok", "session_id": session, "seq": 1})
	if _, m := c2.dispatch("MESSAGE_CREATE"); m["id"] != missed {
		t.Errorf("replayed %v, want the missed message", m)
	}
	if p, _ := c2.dispatch("RESUMED"); *p.S != 3 {
		t.Errorf("RESUMED seq %d, want 3", *p.S)
	}
	if s.Resumes() != 1 {
		t.Errorf("resumes = %d", s.Resumes())
	}

	// A clean close ends the session: resuming it is refused.
	_ = c2.ws.WriteMessage(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.waitFor(ctx, func() bool { return len(s.sessions) == 0 }); err != nil {
		t.Fatalf("session not ended by a clean close: %v", err)
	}
	c3 := dial(t, s)
	c3.send(6, map[string]any{"token": "Bot tok", "session_id": session, "seq": 3})
	if p := c3.read(); p.Op != 9 {
		t.Errorf("resume of an ended session answered op %d, want 9", p.Op)
	}
}

func TestGatewayRefusals(t *testing.T) {
	s := newServer(t)
	s.SetToken("right")
	c := dial(t, s)
	c.send(2, map[string]any{"token": "Bot wrong", "intents": 1})
	var ce *websocket.CloseError
	if _, _, err := c.ws.ReadMessage(); !errors.As(err, &ce) || ce.Code != 4004 {
		t.Errorf("wrong token: %v, want close 4004", err)
	}

	s.RejectIntents(1 << 15)
	c = dial(t, s)
	c.send(2, map[string]any{"token": "Bot right", "intents": 1<<15 | 1})
	if _, _, err := c.ws.ReadMessage(); !errors.As(err, &ce) || ce.Code != 4014 {
		t.Errorf("privileged intent: %v, want close 4014", err)
	}

	s.SetGatewayDown(true)
	if _, resp, err := websocket.DefaultDialer.Dial(s.gatewayURL()+"/", nil); err == nil || resp == nil || resp.StatusCode != 503 {
		t.Errorf("gateway down: %v", err)
	}
}

// TestNonceDeduplicates: with enforce_nonce, a second create with the same
// nonce answers the first message and creates nothing; without it, or with
// another nonce, a message is created; a nonce over 25 characters is a
// form error.
func TestNonceDeduplicates(t *testing.T) {
	s := newServer(t)
	s.AddChannel(chanA, guild)
	path := "/channels/" + chanA + "/messages"
	status, first := call(t, s, "POST", path, map[string]any{"content": "one", "nonce": "sb7.0", "enforce_nonce": true})
	if status != 200 {
		t.Fatalf("first create: %d %v", status, first)
	}
	status, again := call(t, s, "POST", path, map[string]any{"content": "one", "nonce": "sb7.0", "enforce_nonce": true})
	if status != 200 || again["id"] != first["id"] {
		t.Fatalf("repeat with the nonce: %d %v, want the first message %v", status, again["id"], first["id"])
	}
	for _, body := range []map[string]any{
		{"content": "one", "nonce": "sb7.0"},                        // not enforced
		{"content": "one", "nonce": "sb8.0", "enforce_nonce": true}, // another nonce
		{"content": "one", "nonce": 42, "enforce_nonce": true},      // integers are nonces too
	} {
		if status, m := call(t, s, "POST", path, body); status != 200 || m["id"] == first["id"] {
			t.Fatalf("create %v: %d %v, want a new message", body, status, m)
		}
	}
	if status, body := call(t, s, "POST", path, map[string]any{"content": "x", "nonce": strings.Repeat("n", 26)}); status != 400 || code(body) != 50035 {
		t.Fatalf("26-character nonce: %d %v, want a form error", status, body)
	}
	msgs := s.Messages(chanA)
	if len(msgs) != 4 || msgs[0].Nonce != "sb7.0" {
		t.Fatalf("stored %d messages (%+v), want 4", len(msgs), msgs)
	}
}
