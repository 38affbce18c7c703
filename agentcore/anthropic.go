package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// anthropicDefaultBaseURL is used when AnthropicOptions.BaseURL is empty.
const anthropicDefaultBaseURL = "https://api.anthropic.com/"

// anthropicDefaultMaxTokens is the reply budget when neither the options nor
// the request set one; the Messages API requires a value.
const anthropicDefaultMaxTokens = 4096

// AnthropicOptions configures NewAnthropic.
type AnthropicOptions struct {
	// BaseURL of the API; empty means Anthropic's.
	BaseURL string
	// APIKey authenticates the calls.
	APIKey string
	// Model is used when a Request names none.
	Model string
	// HTTPClient replaces the SDK's default client when non-nil.
	HTTPClient *http.Client
	// Timeout bounds one call; 0 means none.
	Timeout time.Duration
	// MaxTokens is the reply budget when a Request sets none (default 4096).
	MaxTokens int
}

// anthropicVersion is the Messages API version sent with every call.
const anthropicVersion = "2023-06-01"

// Anthropic is a Provider for Anthropic's Messages API. It does not stream:
// onDelta receives the whole text once the reply is complete. Create it with
// NewAnthropic.
type Anthropic struct {
	api       llmAPI
	model     string
	maxTokens int
	tools     toolsCache // the encoded "tools" of each list of specs
}

// NewAnthropic returns a provider for the API at opts.BaseURL. It does no
// I/O, reads no environment variables and does not retry; wrap the provider
// with WithRetry.
func NewAnthropic(opts AnthropicOptions) *Anthropic {
	base := opts.BaseURL
	if base == "" {
		base = anthropicDefaultBaseURL
	}
	key := opts.APIKey
	if key == "" {
		key = openAINoKey // a proxy in front of the API may want some key
	}
	maxTokens := opts.MaxTokens
	if maxTokens <= 0 {
		maxTokens = anthropicDefaultMaxTokens
	}
	return &Anthropic{
		api: llmAPI{
			provider: "anthropic",
			baseURL:  base,
			apiKey:   opts.APIKey,
			header:   http.Header{"X-Api-Key": {key}, "Anthropic-Version": {anthropicVersion}},
			client:   httpClientOr(opts.HTTPClient),
			timeout:  opts.Timeout,
		},
		model:     opts.Model,
		maxTokens: maxTokens,
	}
}

// Name returns "anthropic".
func (p *Anthropic) Name() string { return "anthropic" }

// anthropicResponse is the answer of POST /v1/messages.
type anthropicResponse struct {
	Content []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		ID    string          `json:"id"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	} `json:"content"`
	StopReason string `json:"stop_reason"`
	Usage      struct {
		InputTokens  int64 `json:"input_tokens"`
		OutputTokens int64 `json:"output_tokens"`
	} `json:"usage"`
}

// Chat sends one Messages API request and returns the reply. Every failure
// is a *ProviderError, except a Request that cannot be encoded.
func (p *Anthropic) Chat(ctx context.Context, req Request, onDelta func(text string)) (Response, error) {
	body, err := p.request(req)
	if err != nil {
		return Response{}, err
	}
	c, err := p.api.send(ctx, "v1/messages", "application/json", body, body.tools)
	if err != nil {
		return Response{}, err
	}
	defer c.close()
	var msg anthropicResponse
	if err := json.NewDecoder(c.resp.Body).Decode(&msg); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return Response{}, p.api.failRead(ctx, err)
		}
	}
	resp := Response{
		StopReason: msg.StopReason,
		Usage:      Usage{InputTokens: int(msg.Usage.InputTokens), OutputTokens: int(msg.Usage.OutputTokens)},
	}
	var text strings.Builder
	for _, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			args := json.RawMessage(strings.TrimSpace(string(b.Input)))
			if len(args) == 0 || !json.Valid(args) {
				args = toolArguments(string(b.Input))
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	resp.Content = text.String()
	if onDelta != nil && resp.Content != "" {
		onDelta(resp.Content)
	}
	return resp, nil
}

// anthropicRequest is the body of POST /v1/messages.
type anthropicRequest struct {
	Model     string             `json:"model"`
	MaxTokens int                `json:"max_tokens"`
	System    []anthropicBlock   `json:"system,omitempty"`
	Messages  []anthropicMessage `json:"messages"`

	tools json.RawMessage // the encoded []anthropicTool, added by encodeWithTools
}

// anthropicMessage is one turn: "user" or "assistant" and its blocks.
type anthropicMessage struct {
	Role    string           `json:"role"`
	Content []anthropicBlock `json:"content"`
}

// anthropicBlock is a content block: text, tool_use or tool_result.
type anthropicBlock struct {
	Type      string           `json:"type"`
	Text      string           `json:"text,omitempty"`
	ID        string           `json:"id,omitempty"`
	Name      string           `json:"name,omitempty"`
	Input     any              `json:"input,omitempty"` // tool_use: always a non-nil map, so {} is sent too
	ToolUseID string           `json:"tool_use_id,omitempty"`
	IsError   bool             `json:"is_error,omitempty"`
	Content   []anthropicBlock `json:"content,omitempty"`
}

// anthropicTool offers one tool to the model.
type anthropicTool struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	InputSchema map[string]any `json:"input_schema"`
}

// request maps req onto the wire. System messages join the system prompt;
// consecutive messages of one side are merged into one turn, so the results
// of parallel tool calls travel in a single user message.
func (p *Anthropic) request(req Request) (*anthropicRequest, error) {
	body := &anthropicRequest{Model: req.Model, MaxTokens: req.MaxTokens}
	if body.Model == "" {
		body.Model = p.model
	}
	if body.MaxTokens <= 0 {
		body.MaxTokens = p.maxTokens
	}
	if req.System != "" {
		body.System = append(body.System, anthropicBlock{Type: "text", Text: req.System})
	}
	for i, m := range req.Messages {
		var (
			role   = "user"
			blocks []anthropicBlock
		)
		switch m.Role {
		case RoleSystem:
			if m.Content != "" {
				body.System = append(body.System, anthropicBlock{Type: "text", Text: m.Content})
			}
			continue
		case RoleUser:
			if m.Content != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Content})
			}
		case RoleTool:
			blocks = append(blocks, toolResult(m))
		case RoleAssistant:
			role = "assistant"
			if m.Content != "" {
				blocks = append(blocks, anthropicBlock{Type: "text", Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				blocks = append(blocks, anthropicBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: toolInput(c.Arguments)})
			}
		default:
			return nil, fmt.Errorf("anthropic: messages[%d]: unknown role %q", i, m.Role)
		}
		if len(blocks) == 0 {
			continue // the API rejects empty turns and empty text blocks
		}
		if n := len(body.Messages); n > 0 && body.Messages[n-1].Role == role {
			body.Messages[n-1].Content = append(body.Messages[n-1].Content, blocks...)
			continue
		}
		body.Messages = append(body.Messages, anthropicMessage{Role: role, Content: blocks})
	}
	list, err := p.tools.get(req.Tools, anthropicTools)
	if err != nil {
		return nil, err
	}
	body.tools = list
	return body, nil
}

// anthropicTools encodes specs as the request's "tools", each schema mapped
// by anthropicSchema.
func anthropicTools(specs []tools.Spec) (json.RawMessage, error) {
	list := make([]anthropicTool, 0, len(specs))
	for _, t := range specs {
		schema, err := anthropicSchema(t.Parameters)
		if err != nil {
			return nil, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
		}
		list = append(list, anthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema})
	}
	return json.Marshal(list)
}

// toolResult is the tool_result block answering a tool message; an empty
// result has no content block, as the API rejects empty text.
func toolResult(m Message) anthropicBlock {
	r := anthropicBlock{Type: "tool_result", ToolUseID: m.ToolCallID, IsError: m.IsError}
	if m.Content != "" {
		r.Content = []anthropicBlock{{Type: "text", Text: m.Content}}
	}
	return r
}

// toolInput is the input object of a tool_use block. The API only takes
// objects, so arguments that are not one (the model's invalid JSON, kept as
// a string) travel as {"invalid_arguments": <text>}.
func toolInput(raw json.RawMessage) map[string]any {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err == nil && obj != nil {
		return obj
	}
	text := argumentsText(raw)
	if text == "{}" {
		return map[string]any{}
	}
	return map[string]any{"invalid_arguments": text}
}

// anthropicSchema maps a JSON schema object onto a tool's input_schema: its
// type is always "object", properties are always present and required
// keeps only names.
func anthropicSchema(raw json.RawMessage) (map[string]any, error) {
	s := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &s); err != nil || s == nil {
			if err == nil {
				err = errors.New("null")
			}
			return nil, fmt.Errorf("parameters are not a JSON schema object: %w", err)
		}
	}
	s["type"] = "object"
	if s["properties"] == nil {
		s["properties"] = map[string]any{}
	}
	if v, ok := s["required"]; ok {
		list, _ := v.([]any)
		var names []string
		for _, r := range list {
			if name, ok := r.(string); ok {
				names = append(names, name)
			}
		}
		delete(s, "required")
		if len(names) > 0 {
			s["required"] = names
		}
	}
	return s, nil
}
