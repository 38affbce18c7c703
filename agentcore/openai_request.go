package agentcore

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// openAIRequest is the body of a streamed chat completion, the tools apart
// (OpenAI.body puts them in front). It holds only what the daemon sends; the
// wire is the one the SDK's ChatCompletionNewParams encodes
// (TestOpenAIWireMatchesSDK). It is encoded here rather than by the SDK,
// whose reflective encoder re-scans every tool schema and then sets
// "stream" by editing the encoded body: that was the largest part of a
// model call's CPU in the daemon (BenchmarkOpenAIRequestBody). The SDK's
// client still sends it.
type openAIRequest struct {
	Model    string              `json:"model"`
	Messages []openAIWireMessage `json:"messages"`
	// One of the two answer bounds, as the server wants it (see
	// OpenAI.maxCompletionTokens).
	MaxCompletionTokens int                 `json:"max_completion_tokens,omitempty"`
	MaxTokens           int                 `json:"max_tokens,omitempty"`
	Stream              bool                `json:"stream"`
	StreamOptions       openAIStreamOptions `json:"stream_options"`
}

type openAIStreamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// openAIWireMessage is one message of a request. Content is a string, a
// list of parts (a user message with images), or nil: an assistant message
// of tool calls only sends none.
type openAIWireMessage struct {
	Role       string               `json:"role"`
	Content    any                  `json:"content,omitempty"`
	ToolCalls  []openAIWireToolCall `json:"tool_calls,omitempty"`
	ToolCallID *string              `json:"tool_call_id,omitempty"`
}

type openAIWireToolCall struct {
	ID       string             `json:"id"`
	Type     string             `json:"type"`
	Function openAIWireFunction `json:"function"`
}

type openAIWireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// openAIContentPart is a text or image part of a user message.
type openAIContentPart struct {
	Type     string          `json:"type"`
	Text     string          `json:"text,omitempty"`
	ImageURL *openAIImageURL `json:"image_url,omitempty"`
}

type openAIImageURL struct {
	URL string `json:"url"`
}

// body is req as the request body Chat sends: the tools first (each kept
// as its wire JSON by p.tools), then the model, the messages (the system
// prompt first) and the stream options.
func (p *OpenAI) body(req Request) ([]byte, error) {
	r := openAIRequest{
		Model:         cmp.Or(req.Model, p.model),
		Messages:      make([]openAIWireMessage, 0, len(req.Messages)+1),
		Stream:        true,
		StreamOptions: openAIStreamOptions{IncludeUsage: true},
	}
	if req.System != "" {
		r.Messages = append(r.Messages, openAIWireMessage{Role: "system", Content: req.System})
	}
	msgs := fitRequestImages(req.Messages, openAIImageLimits)
	for i := range msgs {
		m, err := openAIMessage(&msgs[i])
		if err != nil {
			return nil, fmt.Errorf("openai: messages[%d]: %w", i, err)
		}
		r.Messages = append(r.Messages, m)
	}
	if req.MaxTokens > 0 {
		if p.maxCompletionTokens {
			r.MaxCompletionTokens = req.MaxTokens
		} else {
			r.MaxTokens = req.MaxTokens
		}
	}
	toolList, err := p.tools.list(req.Tools)
	if err != nil {
		return nil, err
	}
	rest, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("openai: encode the request: %w", err)
	}
	if toolList == nil {
		return rest, nil
	}
	out := make([]byte, 0, len(`{"tools":,`)+len(toolList)+len(rest))
	out = append(out, `{"tools":`...)
	out = append(out, toolList...)
	out = append(out, ',')
	return append(out, rest[1:]...), nil // rest is an object: {"model":…}
}

// openAIMessage maps one conversation message onto the wire's.
func openAIMessage(m *Message) (openAIWireMessage, error) {
	switch m.Role {
	case RoleSystem:
		return openAIWireMessage{Role: "system", Content: m.Content}, nil
	case RoleUser:
		return openAIUserMessage(m), nil
	case RoleTool:
		id := m.ToolCallID
		return openAIWireMessage{Role: "tool", Content: m.Content, ToolCallID: &id}, nil
	case RoleAssistant:
		a := openAIWireMessage{Role: "assistant"}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content = m.Content
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openAIWireToolCall{ID: c.ID, Type: "function",
				Function: openAIWireFunction{Name: c.Name, Arguments: argumentsText(c.Arguments)}})
		}
		return a, nil
	}
	return openAIWireMessage{}, fmt.Errorf("unknown role %q", m.Role)
}

// openAIUserMessage is m as the API's user message: its text, then its
// images that carry bytes (fitted by fitRequestImages) as image_url parts
// holding data URLs.
func openAIUserMessage(m *Message) openAIWireMessage {
	var parts []openAIContentPart
	for _, im := range m.Images {
		if im.Data != nil {
			url := "data:" + im.Type + ";base64," + base64.StdEncoding.EncodeToString(im.Data)
			parts = append(parts, openAIContentPart{Type: "image_url", ImageURL: &openAIImageURL{URL: url}})
		}
	}
	if len(parts) == 0 {
		return openAIWireMessage{Role: "user", Content: m.Content}
	}
	if m.Content != "" {
		parts = append([]openAIContentPart{{Type: "text", Text: m.Content}}, parts...)
	}
	return openAIWireMessage{Role: "user", Content: parts}
}
