package sessions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// ErrUnreachable is returned by a Messenger for a chat the agent may not
// post to; ErrUnsupported for a platform that cannot do what was asked.
var (
	ErrUnreachable = errors.New("that chat is not one this agent may post to")
	ErrUnsupported = errors.New("not supported on this platform")
)

// Messenger posts for the tools (bot implements it through the durable
// outbox).
type Messenger interface {
	// Send queues text to the chat to (platform:chat[:thread]) on behalf of
	// the call's agent, or fails with ErrUnreachable.
	Send(ctx context.Context, from tools.Call, to, text string) error
	// CreateTopic creates a forum topic called name in the chat (platform:
	// chat) and returns the topic's address, or fails with ErrUnreachable
	// or ErrUnsupported.
	CreateTopic(ctx context.Context, from tools.Call, chat, name string) (string, error)
}

// NewMessagingTools returns message and create_forum_topic.
func NewMessagingTools(m Messenger) []tools.Tool {
	return []tools.Tool{&Message{m}, &CreateForumTopic{m}}
}

// Message is the message tool: post to another chat.
type Message struct{ m Messenger }

// Name implements Tool.
func (*Message) Name() string { return "message" }

// Description implements Tool.
func (*Message) Description() string {
	return "Post a message to another chat you serve (platform:chat_id[:thread_id], e.g. telegram:-1001234 or slack:C0123). " +
		"Your reply in this conversation is sent anyway; use this only to reach another chat."
}

// Parameters implements Tool.
func (*Message) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"text":{"type":"string"}},` +
		`"required":["to","text"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*Message) SideEffect() tools.SideEffect { return tools.SideEffectMutating }

// ApprovalKey implements ApprovalKeyed: "Always allow" covers one chat.
func (*Message) ApprovalKey(args json.RawMessage) string {
	var a struct{ To string }
	_ = json.Unmarshal(args, &a)
	return strings.TrimSpace(a.To)
}

// Execute implements Tool.
func (t *Message) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		To   string `json:"to"`
		Text string `json:"text"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || strings.TrimSpace(a.To) == "" || strings.TrimSpace(a.Text) == "" {
		return tools.ErrorResult(`pass {"to": "platform:chat_id", "text": "..."}`)
	}
	if len(a.Text) > tools.MaxMessageText {
		return tools.ErrorResult(fmt.Sprintf("text is %d bytes; a message takes at most %d", len(a.Text), tools.MaxMessageText))
	}
	call, _ := tools.CallFrom(ctx)
	err := t.m.Send(ctx, call, strings.TrimSpace(a.To), a.Text)
	switch {
	case errors.Is(err, ErrUnreachable):
		return tools.ErrorResult(fmt.Sprintf("%s: %v (a chat you have talked in, or one bound to you)", a.To, err))
	case err != nil:
		return tools.ErrorResult(fmt.Sprintf("could not send to %s: %v", a.To, err))
	}
	return tools.Result{ForLLM: "queued for " + a.To}
}

// CreateForumTopic is the create_forum_topic tool (Telegram forum groups).
type CreateForumTopic struct{ m Messenger }

// Name implements Tool.
func (*CreateForumTopic) Name() string { return "create_forum_topic" }

// Description implements Tool.
func (*CreateForumTopic) Description() string {
	return "Create a topic in a Telegram forum group (default: this chat) and return its address for message."
}

// Parameters implements Tool.
func (*CreateForumTopic) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"},` +
		`"chat":{"type":"string","description":"platform:chat_id; default this chat"}},"required":["name"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*CreateForumTopic) SideEffect() tools.SideEffect { return tools.SideEffectMutating }

// Execute implements Tool.
func (t *CreateForumTopic) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Name string `json:"name"`
		Chat string `json:"chat"`
	}
	if err := json.Unmarshal(raw, &a); err != nil || strings.TrimSpace(a.Name) == "" {
		return tools.ErrorResult(`pass {"name": "topic name", "chat"?: "telegram:-100…"}`)
	}
	if len([]rune(a.Name)) > 128 {
		return tools.ErrorResult("a topic name has at most 128 characters")
	}
	call, _ := tools.CallFrom(ctx)
	chat := strings.TrimSpace(a.Chat)
	if chat == "" {
		chat = call.Channel + ":" + call.ChatID
	}
	addr, err := t.m.CreateTopic(ctx, call, chat, strings.TrimSpace(a.Name))
	switch {
	case errors.Is(err, ErrUnreachable), errors.Is(err, ErrUnsupported):
		return tools.ErrorResult(fmt.Sprintf("%s: %v", chat, err))
	case err != nil:
		return tools.ErrorResult(fmt.Sprintf("could not create the topic in %s: %v", chat, err))
	}
	return tools.Result{ForLLM: fmt.Sprintf("created topic %q: %s", a.Name, addr)}
}
