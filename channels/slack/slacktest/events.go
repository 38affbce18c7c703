package slacktest

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strconv"
	"time"
)

// Msg describes a message event.
type Msg struct {
	Channel     string // channel id: C… (public), G… (private), D… (IM)
	ChannelType string // "channel", "group", "im", "mpim"; default from the id
	User        string // sender; empty for some bot messages
	Text        string
	TS          string // the message's ts; default a fresh one
	ThreadTS    string // set for a reply in a thread
	SubType     string // "bot_message", "message_changed", "channel_join"…
	BotID       string // set for messages from bots
	// Files are the file objects shared with the message, from
	// Server.AddFile or built by hand; Slack marks such a message with
	// SubType "file_share".
	Files []map[string]any
}

// Event returns the message as an Events API "message" event.
func (m Msg) Event() map[string]any {
	if m.TS == "" {
		m.TS = NewTS()
	}
	if m.ChannelType == "" {
		m.ChannelType = channelType(m.Channel)
	}
	e := map[string]any{"type": "message", "channel": m.Channel, "channel_type": m.ChannelType,
		"text": m.Text, "ts": m.TS, "event_ts": m.TS}
	for k, v := range map[string]string{"user": m.User, "thread_ts": m.ThreadTS, "subtype": m.SubType, "bot_id": m.BotID} {
		if v != "" {
			e[k] = v
		}
	}
	if m.User != "" {
		e["client_msg_id"] = "cm-" + m.TS
	}
	if len(m.Files) > 0 {
		e["files"] = m.Files
		e["upload"] = true
	}
	return e
}

// Mention returns the message as an Events API "app_mention" event.
func (m Msg) Mention() map[string]any {
	e := m.Event()
	e["type"] = "app_mention"
	delete(e, "channel_type")
	return e
}

func channelType(id string) string {
	switch {
	case len(id) > 0 && id[0] == 'D':
		return "im"
	case len(id) > 0 && id[0] == 'G':
		return "group"
	}
	return "channel"
}

// NewTS returns a fresh message ts (random microseconds, so two calls
// practically never collide).
func NewTS() string {
	return fmt.Sprintf("%d.%06d", time.Now().Unix(), rand.IntN(1000000))
}

// Press describes a press on a button of a message.
type Press struct {
	Channel   string
	User      string
	UserName  string
	MessageTS string // the message carrying the button
	ThreadTS  string // set when that message is in a thread
	TriggerID string // default a fresh one
	ActionID  string
	Value     string // the button's value
}

// BlockActions returns the press as a block_actions interaction payload.
func (p Press) BlockActions() map[string]any {
	if p.TriggerID == "" {
		p.TriggerID = "trig-" + NewTS()
	}
	container := map[string]any{"type": "message", "message_ts": p.MessageTS, "channel_id": p.Channel, "is_ephemeral": false}
	message := map[string]any{"type": "message", "ts": p.MessageTS, "text": "…", "bot_id": BotID}
	if p.ThreadTS != "" {
		container["thread_ts"] = p.ThreadTS
		message["thread_ts"] = p.ThreadTS
	}
	return map[string]any{
		"type":         "block_actions",
		"token":        "verification-token",
		"api_app_id":   AppID,
		"trigger_id":   p.TriggerID,
		"team":         map[string]any{"id": TeamID, "domain": "fake"},
		"user":         map[string]any{"id": p.User, "username": p.UserName, "name": p.UserName, "team_id": TeamID},
		"channel":      map[string]any{"id": p.Channel, "name": "chan"},
		"container":    container,
		"message":      message,
		"response_url": "https://hooks.slack.test/actions/1",
		"actions": []any{map[string]any{"type": "button", "action_id": p.ActionID, "block_id": "b1",
			"value": p.Value, "text": map[string]any{"type": "plain_text", "text": "Button"}, "action_ts": NewTS()}},
	}
}

// callback wraps an inner event in an event_callback payload.
func callback(eventID string, event any) map[string]any {
	return map[string]any{"token": "verification-token", "team_id": TeamID, "api_app_id": AppID,
		"type": "event_callback", "event_id": eventID, "event_time": time.Now().Unix(), "event": event,
		"authorizations": []any{map[string]any{"team_id": TeamID, "user_id": BotUserID, "is_bot": true}}}
}

// EventBody returns the HTTP Events API body for event as event eventID.
func EventBody(eventID string, event any) []byte {
	b, _ := json.Marshal(callback(eventID, event)) // maps of strings always encode
	return b
}

// InteractionBody returns the form body Slack posts for an interaction:
// payload=<json>.
func InteractionBody(payload any) []byte {
	b, _ := json.Marshal(payload)
	return []byte(url.Values{"payload": {string(b)}}.Encode())
}

// Sign returns the X-Slack-Signature of body sent at ts under secret.
func Sign(secret string, ts time.Time, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	fmt.Fprintf(mac, "v0:%d:", ts.Unix())
	mac.Write(body)
	return "v0=" + hex.EncodeToString(mac.Sum(nil))
}

// SignHeaders sets the signature headers of a request sent at ts.
func SignHeaders(h map[string][]string, secret string, ts time.Time, body []byte) {
	h["X-Slack-Request-Timestamp"] = []string{strconv.FormatInt(ts.Unix(), 10)}
	h["X-Slack-Signature"] = []string{Sign(secret, ts, body)}
}
