// Package agentcore runs agents: the loop that sends a conversation to an LLM
// provider, executes the tool calls it asks for and persists every step, plus
// the Provider implementations (OpenAI-compatible and Anthropic).
package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// Role is who said a message.
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one entry of a conversation as providers see it.
type Message struct {
	Role       Role
	Content    string
	ToolCalls  []ToolCall // set on assistant messages that call tools
	ToolCallID string     // set on tool messages: the call this answers
	ToolName   string     // set on tool messages
	IsError    bool       // set on tool messages whose call failed
	// ExternalID is the platform id of the inbound event a user message came
	// from. History refuses a second message with the same id in a session
	// (ErrDuplicate), which makes redelivered updates harmless.
	ExternalID string
	// Seq is the message's position in its session, set by History.Load.
	Seq int64
	// Images are pictures sent with a user message. The model reads them
	// as image input when its agent has vision; otherwise only the
	// attachment lines in Content tell of them.
	Images []Image
}

// Image is one picture a user message carries, by reference to the stored
// attachment (bot/media): its bytes are loaded only while a request to a
// model with vision is built, never kept in the history.
type Image struct {
	// SHA256 is the stored attachment's key.
	SHA256 string
	// Type is its MIME type, sniffed from the bytes ("image/png").
	Type string
	// Data is the content, set only on the copy in a Request.
	Data []byte
}

// ToolCall is the model's request to run one tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments json.RawMessage // a JSON object
}

// Request is one call to a provider.
type Request struct {
	Model     string
	System    string
	Messages  []Message
	Tools     []tools.Spec
	MaxTokens int
}

// Usage counts the tokens of one response, as the provider reported them.
// InputTokens are the input tokens read without the prompt cache; the
// cached ones are counted apart (OpenAI's prompt_tokens include its
// cached_tokens, so its provider subtracts them; Anthropic reports the
// three apart), so the four add up to everything the model took in and
// wrote.
type Usage struct {
	InputTokens  int
	OutputTokens int
	// CacheReadTokens were served from the provider's prompt cache.
	CacheReadTokens int
	// CacheWriteTokens were written to the prompt cache (Anthropic's
	// cache_creation_input_tokens).
	CacheWriteTokens int
}

// Add returns the sum of u and v.
func (u Usage) Add(v Usage) Usage {
	return Usage{
		InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens,
		CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens,
	}
}

// tokens is a token count a provider reported, 0 when it is negative.
func tokens(n int64) int { return int(max(n, 0)) }

// Response is the model's answer: text, tool calls, or both.
type Response struct {
	Content    string
	ToolCalls  []ToolCall
	Usage      Usage
	StopReason string
	// Model is the model that answered, when a wrapper chose it
	// (WithFallbacks); "" means the one the Request asked for.
	Model string
}

// Provider talks to one LLM API.
type Provider interface {
	// Name identifies the provider in logs and metrics ("openai", "anthropic").
	Name() string
	// Chat sends req and returns the complete response. Implementations may
	// stream internally; onText, when non-nil, receives the reply's text so
	// far each time it grows. A call tried again (WithRetry) or by another
	// model (WithFallbacks) starts again from its first words, so a caller
	// showing the text shows the latest onText, never a sum of them.
	Chat(ctx context.Context, req Request, onText func(soFar string)) (Response, error)
}

// ProviderError is a failed provider call with what is known about it.
type ProviderError struct {
	Provider   string
	Status     int           // HTTP status, 0 when the request did not complete
	RetryAfter time.Duration // server's hint, 0 when none
	// Code is the error body's code, else its type ("model_not_found",
	// "not_found_error"), "" when it has neither.
	Code string
	// Model is the model the failed call asked for, when known.
	Model string
	Err   error
}

func (e *ProviderError) Error() string {
	if e.Status != 0 {
		return fmt.Sprintf("%s: HTTP %d: %v", e.Provider, e.Status, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Provider, e.Err)
}

func (e *ProviderError) Unwrap() error { return e.Err }

// Retryable reports whether trying the same request again may succeed:
// 408, 409, 429, 5xx and transport failures (status 0) except cancellation.
func (e *ProviderError) Retryable() bool {
	if errors.Is(e.Err, context.Canceled) {
		return false
	}
	switch {
	case e.Status == 0, e.Status == 408, e.Status == 409, e.Status == 429, e.Status >= 500:
		return true
	}
	return false
}
