package telegramtest_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// control serves s's control endpoint on loopback.
func control(t *testing.T, s *telegramtest.Server) string {
	t.Helper()
	srv := httptest.NewServer(s.Control())
	t.Cleanup(srv.Close)
	return srv.URL
}

// controlDo sends a control request and decodes its JSON answer into out.
func controlDo(t *testing.T, method, url, body string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer r.Body.Close()
	if out != nil {
		if err := json.NewDecoder(r.Body).Decode(out); err != nil {
			t.Fatalf("decode %s %s: %v", method, url, err)
		}
	}
	return r.StatusCode
}

// pendingUpdates returns the unconfirmed updates as the bot would get them.
func pendingUpdates(t *testing.T, s *telegramtest.Server) []map[string]any {
	t.Helper()
	_, resp := call(t, s, token, "getUpdates", map[string]any{"timeout": 0})
	var ups []map[string]any
	if err := json.Unmarshal(resp.Result, &ups); err != nil {
		t.Fatal(err)
	}
	return ups
}

// TestControlSendPressAndRead: a script sends a message as a user, reads
// what the bot sent with its buttons, and presses one by its label; the
// bot gets the message and the callback query as from Telegram.
func TestControlSendPressAndRead(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	url := control(t, s)

	var sent struct {
		UpdateID int64 `json:"update_id"`
	}
	if code := controlDo(t, "POST", url+"/control/send", `{"chat_id":700,"user_id":700,"user_name":"Dev","text":"hello bot"}`, &sent); code != 200 || sent.UpdateID == 0 {
		t.Fatalf("send: %d %+v", code, sent)
	}
	ups := pendingUpdates(t, s)
	msg, _ := ups[0]["message"].(map[string]any)
	if len(ups) != 1 || msg["text"] != "hello bot" || msg["from"].(map[string]any)["id"].(float64) != 700 {
		t.Fatalf("the bot got %v", ups)
	}

	// A wait for a new message returns once the bot sends one.
	got := make(chan []telegramtest.ControlMessage, 1)
	go func() {
		var msgs []telegramtest.ControlMessage
		if r, err := http.Get(url + "/control/messages?chat_id=500&after=0&wait=20s"); err == nil {
			_ = json.NewDecoder(r.Body).Decode(&msgs)
			_ = r.Body.Close()
		}
		got <- msgs
	}()
	call(t, s, token, "sendMessage", map[string]any{"chat_id": 500, "text": "Approve?",
		"reply_markup": map[string]any{"inline_keyboard": [][]map[string]string{{
			{"text": "Allow once", "callback_data": "ap:x:o"}, {"text": "Deny", "callback_data": "ap:x:d"}}}}})
	msgs := <-got
	if len(msgs) != 1 || msgs[0].Text != "Approve?" || len(msgs[0].Buttons) != 1 || msgs[0].Buttons[0][1].CallbackData != "ap:x:d" {
		t.Fatalf("messages = %+v", msgs)
	}
	var after []telegramtest.ControlMessage
	controlDo(t, "GET", url+"/control/messages?chat_id=500&after="+strconv.Itoa(msgs[0].ID), "", &after)
	if len(after) != 0 {
		t.Fatalf("after the newest id: %+v", after)
	}
	call(t, s, token, "sendMessage", map[string]any{"chat_id": 500, "text": "tool exec said: hi"})
	var found []telegramtest.ControlMessage
	controlDo(t, "GET", url+"/control/messages?chat_id=500&contains=exec+said&wait=20s", "", &found)
	if len(found) != 1 || found[0].Text != "tool exec said: hi" {
		t.Fatalf("contains=exec said: %+v", found)
	}

	if code := controlDo(t, "POST", url+"/control/press", `{"chat_id":500,"user_id":500,"label":"Deny"}`, &sent); code != 200 {
		t.Fatalf("press: %d", code)
	}
	ups = pendingUpdates(t, s)
	cb, _ := ups[len(ups)-1]["callback_query"].(map[string]any)
	if cb["data"] != "ap:x:d" || cb["from"].(map[string]any)["id"].(float64) != 500 ||
		cb["message"].(map[string]any)["message_id"].(float64) != float64(msgs[0].ID) {
		t.Fatalf("the bot got the press %v", cb)
	}
}

// TestControlRefusesBadRequests: malformed or unknown requests are
// refused with a reason and push nothing to the bot; clients that are not
// on this machine are refused.
func TestControlRefusesBadRequests(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	url := control(t, s)
	for _, tt := range []struct {
		method, path, body string
		code               int
		says               string
	}{
		{"POST", "/control/send", `{"user_id":7}`, 400, `"text"`},
		{"POST", "/control/send", `{"user_id":7,"text":"x","admin":true}`, 400, "unknown field"},
		{"POST", "/control/send", `not json`, 400, "JSON object"},
		{"POST", "/control/press", `{"user_id":7,"label":"Allow once"}`, 404, `no bot message in chat 7 has a "Allow once" button`},
		{"POST", "/control/press", `{"user_id":7,"data":"ap:x:o"}`, 400, "message_id"},
		{"POST", "/control/press", `{"user_id":7,"data":"a","label":"b"}`, 400, `either "data" or "label"`},
		{"GET", "/control/messages", "", 400, "chat_id"},
		{"GET", "/control/messages?chat_id=1&wait=1h", "", 400, "up to 60s"},
		{"GET", "/control/send", "", 405, ""},
	} {
		var e struct {
			Error string `json:"error"`
		}
		var out any = &e
		if tt.code == 405 {
			out = nil
		}
		if code := controlDo(t, tt.method, url+tt.path, tt.body, out); code != tt.code || !strings.Contains(e.Error, tt.says) {
			t.Errorf("%s %s %s: %d %q, want %d saying %q", tt.method, tt.path, tt.body, code, e.Error, tt.code, tt.says)
		}
	}
	if p := s.Pending(); len(p) != 0 {
		t.Fatalf("refused requests pushed updates %v", p)
	}

	req := httptest.NewRequest("POST", "/control/send", strings.NewReader(`{"user_id":7,"text":"x"}`))
	req.RemoteAddr = "192.0.2.10:40000"
	rec := httptest.NewRecorder()
	s.Control().ServeHTTP(rec, req)
	if rec.Code != http.StatusForbidden || len(s.Pending()) != 0 {
		t.Fatalf("a remote client got %d (pending %v)", rec.Code, s.Pending())
	}
}
