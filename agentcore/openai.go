package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	segjson "github.com/segmentio/encoding/json"

	"github.com/switchboard-chat/switchboard/tools"
)

// openAIDefaultBaseURL is used when OpenAIOptions.BaseURL is empty.
const openAIDefaultBaseURL = "https://api.openai.com/v1/"

// openAINoKey is sent as the bearer when no API key is configured: local
// servers (Ollama, vLLM) ignore it, and a proxy in front of them may want
// some Authorization header.
const openAINoKey = "no-key"

// OpenAIOptions configures NewOpenAI.
type OpenAIOptions struct {
	// BaseURL of any OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1
	// (Ollama). Empty means OpenAI's.
	BaseURL string
	// APIKey may be empty for local servers.
	APIKey string
	// Model is used when a Request names none.
	Model string
	// HTTPClient, when non-nil, replaces a client of the provider's own.
	HTTPClient *http.Client
	// Timeout bounds one call, the streamed body included; 0 means none.
	Timeout time.Duration
}

// OpenAI is a Provider for the OpenAI chat completions API and the servers
// that speak it. It streams every call. Create it with NewOpenAI.
type OpenAI struct {
	api   llmAPI
	model string
	// maxCompletionTokens: OpenAI's own API wants max_completion_tokens;
	// compatible servers commonly only know max_tokens.
	maxCompletionTokens bool
	tools               toolsCache // the encoded "tools" of each list of specs
}

// openAIAPI returns the HTTP plumbing of an OpenAI-compatible API: the base
// URL (OpenAI's when empty) and the bearer key (a placeholder when empty:
// local servers need none, and nothing is read from the environment).
func openAIAPI(base, key string, client *http.Client, timeout time.Duration) llmAPI {
	if base == "" {
		base = openAIDefaultBaseURL
	}
	bearer := key
	if bearer == "" {
		bearer = openAINoKey
	}
	return llmAPI{
		provider: "openai",
		baseURL:  base,
		apiKey:   key,
		header:   http.Header{"Authorization": {"Bearer " + bearer}},
		client:   httpClientOr(client),
		timeout:  timeout,
	}
}

// NewOpenAI returns a provider for the API at opts.BaseURL. It does no I/O
// and does not retry; wrap the provider with WithRetry.
func NewOpenAI(opts OpenAIOptions) *OpenAI {
	api := openAIAPI(opts.BaseURL, opts.APIKey, opts.HTTPClient, opts.Timeout)
	return &OpenAI{
		api:                 api,
		model:               opts.Model,
		maxCompletionTokens: strings.Contains(api.baseURL, "api.openai.com"),
	}
}

// Name returns "openai".
func (p *OpenAI) Name() string { return "openai" }

// Chat streams one chat completion, passing content to onDelta as it
// arrives, and returns the accumulated response. Every failure is a
// *ProviderError, except a Request that cannot be encoded (a message with an
// unknown role, a tool whose Parameters are not JSON).
func (p *OpenAI) Chat(ctx context.Context, req Request, onDelta func(text string)) (Response, error) {
	body, err := p.request(req)
	if err != nil {
		return Response{}, err
	}
	c, err := p.api.send(ctx, "chat/completions", "text/event-stream", body, body.tools)
	if err != nil {
		return Response{}, err
	}
	defer c.close()
	acc := openAIStream{onDelta: onDelta, apiKey: p.api.apiKey}
	err = readSSE(c.resp.Body, acc.event)
	if err != nil {
		return Response{}, p.api.failRead(ctx, err)
	}
	if acc.chunks == 0 {
		return Response{}, &ProviderError{Provider: p.Name(), Err: fmt.Errorf(
			"the LLM server at %s sent an empty stream; check that llm.base_url points at an OpenAI-compatible /v1 endpoint", p.api.baseURL)}
	}
	if acc.finish == "" {
		return Response{}, &ProviderError{Provider: p.Name(), Err: errors.New(
			"the LLM server's stream ended before the model finished; try again")}
	}
	return acc.response(), nil
}

// openAIRequest is the body of POST /chat/completions.
type openAIRequest struct {
	Model               string          `json:"model"`
	Messages            []openAIMessage `json:"messages"`
	MaxTokens           int             `json:"max_tokens,omitempty"`
	MaxCompletionTokens int             `json:"max_completion_tokens,omitempty"`
	Stream              bool            `json:"stream"`
	StreamOptions       struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`

	tools json.RawMessage // the encoded []openAITool, added by encodeWithTools
}

// openAIMessage is one message of the conversation on the wire.
type openAIMessage struct {
	Role       string           `json:"role"`
	Content    *string          `json:"content,omitempty"`
	ToolCalls  []openAIWireCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

// openAIWireCall is a tool call of an assistant message.
type openAIWireCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// openAITool offers one function to the model.
type openAITool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// request maps req onto the wire.
func (p *OpenAI) request(req Request) (*openAIRequest, error) {
	body := &openAIRequest{Model: req.Model, Stream: true, Messages: make([]openAIMessage, 0, len(req.Messages)+1)}
	if body.Model == "" {
		body.Model = p.model
	}
	body.StreamOptions.IncludeUsage = true
	if req.System != "" {
		body.Messages = append(body.Messages, openAIMessage{Role: "system", Content: &req.System})
	}
	for i := range req.Messages {
		msg, err := openAIMessageOf(&req.Messages[i])
		if err != nil {
			return nil, fmt.Errorf("openai: messages[%d]: %w", i, err)
		}
		body.Messages = append(body.Messages, msg)
	}
	list, err := p.tools.get(req.Tools, openAITools)
	if err != nil {
		return nil, err
	}
	body.tools = list
	if req.MaxTokens > 0 {
		if p.maxCompletionTokens {
			body.MaxCompletionTokens = req.MaxTokens
		} else {
			body.MaxTokens = req.MaxTokens
		}
	}
	return body, nil
}

// openAITools encodes specs as the request's "tools": function tools whose
// parameters must be JSON schema objects.
func openAITools(specs []tools.Spec) (json.RawMessage, error) {
	list := make([]openAITool, 0, len(specs))
	for _, t := range specs {
		var tool openAITool
		tool.Type = "function"
		tool.Function.Name = t.Name
		tool.Function.Description = t.Description
		tool.Function.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(t.Parameters, &obj); err != nil || obj == nil {
				if err == nil {
					err = errors.New("not an object")
				}
				return nil, fmt.Errorf("openai: tool %s: parameters are not a JSON schema object: %w", t.Name, err)
			}
			tool.Function.Parameters = t.Parameters
		}
		list = append(list, tool)
	}
	return json.Marshal(list)
}

// openAIMessageOf maps one conversation message onto the wire. The wire
// message points at m's content rather than at a copy (one allocation per
// message of the history, for every model call): m must not change until
// the request is encoded.
func openAIMessageOf(m *Message) (openAIMessage, error) {
	switch m.Role {
	case RoleSystem, RoleUser:
		return openAIMessage{Role: string(m.Role), Content: &m.Content}, nil
	case RoleTool:
		return openAIMessage{Role: "tool", Content: &m.Content, ToolCallID: m.ToolCallID}, nil
	case RoleAssistant:
		msg := openAIMessage{Role: "assistant"}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			msg.Content = &m.Content
		}
		for _, c := range m.ToolCalls {
			wc := openAIWireCall{ID: c.ID, Type: "function"}
			wc.Function.Name = c.Name
			wc.Function.Arguments = argumentsText(c.Arguments)
			msg.ToolCalls = append(msg.ToolCalls, wc)
		}
		return msg, nil
	}
	return openAIMessage{}, fmt.Errorf("unknown role %q", m.Role)
}

// argumentsText is the wire text of stored arguments. Arguments the model
// sent as invalid JSON are stored as a JSON string (see toolArguments) and go
// back as the original text.
func argumentsText(raw json.RawMessage) string {
	trimmed := strings.TrimSpace(string(raw))
	if trimmed == "" || trimmed == "null" {
		return "{}"
	}
	if trimmed[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err == nil {
			return s
		}
	}
	return trimmed
}

// toolArguments turns the model's argument text into Arguments: valid JSON
// as-is, nothing as {}, anything else as a JSON string holding the text, so
// the loop can tell the model what it sent.
func toolArguments(text string) json.RawMessage {
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return json.RawMessage("{}")
	}
	if json.Valid([]byte(trimmed)) {
		return json.RawMessage(trimmed)
	}
	b, _ := json.Marshal(text)
	return b
}

// openAIChunk is one event of a streamed completion. Fields of an
// unexpected type are left empty rather than failing the stream.
type openAIChunk struct {
	Choices []struct {
		Index int64 `json:"index"`
		Delta struct {
			Content   string                `json:"content"`
			Refusal   string                `json:"refusal"`
			ToolCalls []openAIToolCallDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
	} `json:"usage"`
	Error json.RawMessage `json:"error"`
}

// openAIToolCallDelta is one piece of a streamed tool call.
type openAIToolCallDelta struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// openAIStream accumulates the chunks of one streamed completion.
type openAIStream struct {
	onDelta func(string) // receives content as it arrives; may be nil
	apiKey  string       // redacted from the server's error messages
	chunks  int
	content strings.Builder
	calls   []*openAIToolCall
	byIndex map[int64]*openAIToolCall
	finish  string
	usage   Usage
	chunk   openAIChunk // the one being read, reused (see decode)
}

type openAIToolCall struct {
	id, name string
	args     strings.Builder
}

// event takes the data of one server-sent event: "[DONE]" ends the stream,
// an object with an "error" member fails it, anything else is a chunk.
func (a *openAIStream) event(data []byte) (bool, error) {
	if string(bytes.TrimSpace(data)) == "[DONE]" {
		return false, nil
	}
	ch := &a.chunk
	if err := ch.decode(data); err != nil {
		var typeErr *json.UnmarshalTypeError
		if !errors.As(err, &typeErr) {
			return false, &ProviderError{Provider: "openai", Err: fmt.Errorf(
				"the LLM server sent a stream event that is not JSON (%w); check that llm.base_url points at an OpenAI-compatible /v1 endpoint", err)}
		}
	}
	if len(ch.Error) > 0 && string(ch.Error) != "null" {
		msg, status := streamErrorDetails(data)
		return false, &ProviderError{Provider: "openai", Status: status, Err: errors.New(
			"the LLM server reported an error mid-stream: " + redact(msg, a.apiKey))}
	}
	a.add(ch)
	return true, nil
}

// decode replaces ch with the chunk in data. A stream has a chunk per
// token, so this is most of what the daemon does while a model streams.
// segmentio's decoder takes half the time of encoding/json's
// (BenchmarkOpenAIStreamEvent), but it makes room for ten elements of a
// slice at a time: ch is reused for the stream's chunks so that room is
// made once, and cleared before each chunk, as a decoder leaves a field the
// chunk lacks as it was. It also stops at the first field of an unexpected
// type, where encoding/json leaves that field empty and decodes the rest; a
// chunk it fails on is decoded again by encoding/json, so what comes out
// is always encoding/json's.
func (ch *openAIChunk) decode(data []byte) error {
	ch.reset()
	if segjson.Unmarshal(data, ch) == nil {
		return nil
	}
	ch.reset()
	return json.Unmarshal(data, ch)
}

// reset empties ch, keeping the room its choices had.
func (ch *openAIChunk) reset() {
	choices := ch.Choices[:cap(ch.Choices)]
	clear(choices)
	*ch = openAIChunk{Choices: choices[:0]}
}

func (a *openAIStream) add(ch *openAIChunk) {
	a.chunks++
	if u := ch.Usage; u != nil && (u.PromptTokens > 0 || u.CompletionTokens > 0) {
		a.usage = Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens)}
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		if text := c.Delta.Content + c.Delta.Refusal; text != "" {
			a.content.WriteString(text)
			if a.onDelta != nil {
				a.onDelta(text)
			}
		}
		for _, d := range c.Delta.ToolCalls {
			a.addToolDelta(d)
		}
		if c.FinishReason != "" {
			a.finish = c.FinishReason
		}
	}
}

// addToolDelta merges one tool call piece. Pieces are keyed by index; a new
// id at a known index starts a new call (some servers send every call whole
// at index 0).
func (a *openAIStream) addToolDelta(d openAIToolCallDelta) {
	if a.byIndex == nil {
		a.byIndex = map[int64]*openAIToolCall{}
	}
	tc := a.byIndex[d.Index]
	if tc == nil || (d.ID != "" && tc.id != "" && d.ID != tc.id) {
		tc = &openAIToolCall{}
		a.byIndex[d.Index] = tc
		a.calls = append(a.calls, tc)
	}
	if d.ID != "" {
		tc.id = d.ID
	}
	// The name normally arrives whole in the first piece; some servers repeat it.
	if n := d.Function.Name; n != "" && n != tc.name {
		tc.name += n
	}
	tc.args.WriteString(d.Function.Arguments)
}

func (a *openAIStream) response() Response {
	r := Response{Content: a.content.String(), Usage: a.usage, StopReason: a.finish}
	for i, tc := range a.calls {
		id := tc.id
		if id == "" {
			id = fmt.Sprintf("call_%d", i)
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: id, Name: tc.name, Arguments: toolArguments(tc.args.String())})
	}
	return r
}

// streamErrorDetails reads the message of an error event and its code when
// that is an HTTP status.
func streamErrorDetails(data []byte) (msg string, status int) {
	var ev struct {
		Error struct {
			Message string          `json:"message"`
			Code    json.RawMessage `json:"code"`
		} `json:"error"`
	}
	if err := json.Unmarshal(data, &ev); err != nil || ev.Error.Message == "" {
		return strings.TrimSpace(string(data)), 0
	}
	var code int
	if json.Unmarshal(ev.Error.Code, &code) == nil && code >= 400 && code < 600 {
		status = code
	}
	return ev.Error.Message, status
}
