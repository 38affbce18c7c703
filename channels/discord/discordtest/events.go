package discordtest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"
)

// Incoming is a message a user (or another bot) writes.
type Incoming struct {
	ChannelID string
	GuildID   string // empty: a DM channel with UserID
	UserID    string
	UserName  string
	Text      string
	Bot       bool   // written by a bot account
	WebhookID string // written through a webhook
	Type      int    // Discord message type; 0 default, 19 reply, 7 member join…
	Flags     int    // message flags; 1<<13 marks a voice message
	Stickers  int    // number of stickers sent
	// Files are attached to the message; the fake's CDN serves those
	// without a URL of their own.
	Files []File
}

// SendMessage makes userID write text in channelID (a guild channel when
// guildID is set, else a DM channel with userID) and dispatches
// MESSAGE_CREATE. It returns the message id.
func (s *Server) SendMessage(channelID, guildID, userID, userName, text string) string {
	return s.PushMessage(Incoming{ChannelID: channelID, GuildID: guildID, UserID: userID, UserName: userName, Text: text})
}

// mentionPattern finds user mentions in content.
var mentionPattern = regexp.MustCompile(`<@!?(\d+)>`)

// PushMessage dispatches MESSAGE_CREATE for in and returns the message id.
// The channel and user are registered as needed.
func (s *Server) PushMessage(in Incoming) string {
	s.mu.Lock()
	if in.UserName != "" {
		s.users[in.UserID] = in.UserName
	} else if _, ok := s.users[in.UserID]; !ok {
		s.users[in.UserID] = "user" + in.UserID
	}
	dmUser := ""
	if in.GuildID == "" {
		dmUser = in.UserID
	}
	ch := s.channelLocked(in.ChannelID, in.GuildID, dmUser)
	m := &message{Message: Message{
		ID: s.newIDLocked(), ChannelID: in.ChannelID, GuildID: ch.guildID, AuthorID: in.UserID,
		Content: in.Text, Created: time.Now(),
	}, typ: in.Type, flags: in.Flags}
	m.Files = s.storeFilesLocked(in.ChannelID, m.ID, in.Files)
	s.messages[m.ID] = m
	s.order = append(s.order, m.ID)
	obj := s.messageObjectLocked(m)
	author := userObject(in.UserID, s.nameLocked(in.UserID))
	author["bot"] = in.Bot
	obj["author"] = author
	if in.WebhookID != "" {
		obj["webhook_id"] = in.WebhookID
	}
	mentions := []any{}
	for _, sub := range mentionPattern.FindAllStringSubmatch(in.Text, -1) {
		if sub[1] == BotID {
			mentions = append(mentions, botUser())
		} else if name, ok := s.users[sub[1]]; ok {
			mentions = append(mentions, userObject(sub[1], name))
		}
	}
	obj["mentions"] = mentions
	if in.Stickers > 0 {
		var stickers []any
		for i := range in.Stickers {
			stickers = append(stickers, map[string]any{"id": fmt.Sprintf("%s%d", m.ID, i), "name": "wave", "format_type": 1})
		}
		obj["sticker_items"] = stickers
	}
	if ch.guildID != "" {
		obj["member"] = map[string]any{"roles": []any{}, "joined_at": timestamp(m.Created), "deaf": false, "mute": false}
	}
	s.dispatchLocked("MESSAGE_CREATE", obj)
	s.mu.Unlock()
	return m.ID
}

// interaction is a button press the server dispatched.
type interaction struct {
	id, token string
	sent      time.Time
	acked     bool
}

// InteractionResponse is the bot's answer to an interaction (its
// callback).
type InteractionResponse struct {
	InteractionID string
	Type          int // 6: deferred update of the pressed message
	Data          json.RawMessage
	Delay         time.Duration // from the press to the answer
}

// Followup is a follow-up message the bot posted to an interaction.
type Followup struct {
	InteractionID   string
	Content         string
	Flags           int // 64: ephemeral, shown to the presser alone
	AllowedMentions *AllowedMentions
}

// PressButton makes userID press the button with customID on messageID in
// channelID and dispatches INTERACTION_CREATE. It returns the interaction
// id. The bot must answer within three seconds, as on Discord.
func (s *Server) PressButton(channelID, messageID, userID, customID string) string {
	token := make([]byte, 24)
	_, _ = rand.Read(token)
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.channelLocked(channelID, "", "")
	it := &interaction{id: s.newIDLocked(), token: "aW50ZXJhY3Rpb246" + hex.EncodeToString(token), sent: time.Now()}
	s.interactions[it.id] = it
	name := s.nameLocked(userID)
	s.users[userID] = name
	obj := map[string]any{
		"id": it.id, "application_id": BotID, "type": 3, "token": it.token, "version": 1,
		"data":       map[string]any{"custom_id": customID, "component_type": 2},
		"channel_id": channelID,
		"channel":    map[string]any{"id": channelID, "type": map[bool]int{true: 1, false: 0}[ch.guildID == ""]},
		"locale":     "en-US",
	}
	if m, ok := s.messages[messageID]; ok {
		obj["message"] = s.messageObjectLocked(m)
	} else {
		obj["message"] = map[string]any{"id": messageID, "channel_id": channelID}
	}
	user := userObject(userID, name)
	if ch.guildID != "" {
		obj["guild_id"] = ch.guildID
		obj["member"] = map[string]any{"user": user, "roles": []any{}, "joined_at": timestamp(it.sent), "permissions": "0"}
	} else {
		obj["user"] = user
	}
	s.dispatchLocked("INTERACTION_CREATE", obj)
	return it.id
}

// InteractionResponses returns the bot's answers to interactions, oldest
// first.
func (s *Server) InteractionResponses() []InteractionResponse {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]InteractionResponse(nil), s.responses...)
}

// Followups returns the follow-up messages the bot posted, oldest first.
func (s *Server) Followups() []Followup {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Followup(nil), s.followups...)
}

// postCallback serves POST /interactions/{id}/{token}/callback.
func (s *Server) postCallback(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Type int             `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeError(w, http.StatusBadRequest, 50109, "The request body contains invalid JSON.")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.interactions[r.PathValue("id")]
	switch {
	case !ok || it.token != r.PathValue("token") || time.Since(it.sent) > ackDeadline:
		writeError(w, http.StatusNotFound, 10062, "Unknown interaction")
		return
	case it.acked:
		writeError(w, http.StatusBadRequest, 40060, "Interaction has already been acknowledged.")
		return
	case body.Type < 1 || body.Type > 12:
		writeFormError(w, "type", "BASE_TYPE_CHOICES", "Value must be a valid interaction callback type.")
		return
	}
	it.acked = true
	s.responses = append(s.responses, InteractionResponse{
		InteractionID: it.id, Type: body.Type, Data: body.Data, Delay: time.Since(it.sent),
	})
	s.notifyLocked()
	w.WriteHeader(http.StatusNoContent)
}

// postFollowup serves POST /webhooks/{application}/{token}: a follow-up
// message to an acknowledged interaction.
func (s *Server) postFollowup(w http.ResponseWriter, r *http.Request) {
	body, _, _, err := readBody(r)
	if err != nil {
		writeBodyError(w, err)
		return
	}
	var content string
	if body.Content != nil {
		content = *body.Content
	}
	if fe := checkContent(content); fe != nil {
		writeFormError(w, fe.field, fe.code, fe.msg)
		return
	}
	if content == "" {
		writeError(w, http.StatusBadRequest, 50006, "Cannot send an empty message")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var it *interaction
	for _, cand := range s.interactions {
		if cand.token == r.PathValue("token") {
			it = cand
		}
	}
	if r.PathValue("application") != BotID || it == nil || !it.acked {
		writeError(w, http.StatusNotFound, 10015, "Unknown Webhook")
		return
	}
	s.followups = append(s.followups, Followup{
		InteractionID: it.id, Content: content, Flags: body.Flags, AllowedMentions: body.AllowedMentions,
	})
	s.notifyLocked()
	if r.URL.Query().Get("wait") != "true" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": s.newIDLocked(), "channel_id": "0", "author": botUser(), "content": content,
		"timestamp": timestamp(time.Now()), "flags": body.Flags, "type": 0,
		"mentions": []any{}, "attachments": []any{}, "embeds": []any{}, "components": []any{},
	})
}
