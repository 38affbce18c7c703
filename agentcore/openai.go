package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
)

// openAIDefaultBaseURL is used when OpenAIOptions.BaseURL is empty.
const openAIDefaultBaseURL = "https://api.openai.com/v1/"

// openAINoKey is sent when no API key is configured: local servers (Ollama,
// vLLM) ignore it, and it keeps the SDK from picking up OPENAI_API_KEY.
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
	// HTTPClient replaces the SDK's default client when non-nil.
	HTTPClient *http.Client
	// Timeout bounds one call, the streamed body included; 0 means none.
	Timeout time.Duration
}

// OpenAI is a Provider for the OpenAI chat completions API and the servers
// that speak it. It streams every call. Create it with NewOpenAI.
type OpenAI struct {
	client  openai.ChatCompletionService
	model   string
	apiKey  string // only to redact it from error messages
	baseURL string
	// maxCompletionTokens: OpenAI's own API wants max_completion_tokens;
	// compatible servers commonly only know max_tokens.
	maxCompletionTokens bool
}

// openAIClientOptions returns the base URL (the default when empty) and
// the SDK options every OpenAI-compatible client here starts from: base
// URL, key (a placeholder when empty: local servers need none) and retries.
func openAIClientOptions(base, key string, retries int) (string, []option.RequestOption) {
	if base == "" {
		base = openAIDefaultBaseURL
	}
	if key == "" {
		key = openAINoKey
	}
	return base, []option.RequestOption{option.WithBaseURL(base), option.WithAPIKey(key), option.WithMaxRetries(retries)}
}

// NewOpenAI returns a provider for the API at opts.BaseURL. It does no I/O.
// The SDK's own retries are off; wrap the provider with WithRetry.
func NewOpenAI(opts OpenAIOptions) *OpenAI {
	base, ro := openAIClientOptions(opts.BaseURL, opts.APIKey, 0)
	if opts.HTTPClient != nil {
		ro = append(ro, option.WithHTTPClient(opts.HTTPClient))
	}
	if opts.Timeout > 0 {
		ro = append(ro, option.WithRequestTimeout(opts.Timeout))
	}
	return &OpenAI{
		client:              openai.NewChatCompletionService(ro...),
		model:               opts.Model,
		apiKey:              opts.APIKey,
		baseURL:             base,
		maxCompletionTokens: strings.Contains(base, "api.openai.com"),
	}
}

// Name returns "openai".
func (p *OpenAI) Name() string { return "openai" }

// Chat streams one chat completion, passing content to onDelta as it
// arrives, and returns the accumulated response. Every failure is a
// *ProviderError, except a Request that cannot be encoded (a message with an
// unknown role, a tool whose Parameters are not JSON).
func (p *OpenAI) Chat(ctx context.Context, req Request, onDelta func(text string)) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	stream := p.client.NewStreaming(ctx, params)
	defer stream.Close()
	var acc openAIStream
	for stream.Next() {
		acc.add(stream.Current(), onDelta)
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.fail(ctx, err)
	}
	if acc.chunks == 0 {
		return Response{}, &ProviderError{Provider: p.Name(), Err: fmt.Errorf(
			"the LLM server at %s sent an empty stream; check that llm.base_url points at an OpenAI-compatible /v1 endpoint", p.baseURL)}
	}
	if acc.finish == "" {
		return Response{}, &ProviderError{Provider: p.Name(), Err: errors.New(
			"the LLM server's stream ended before the model finished; try again")}
	}
	return acc.response(), nil
}

// params maps req onto the SDK's request.
func (p *OpenAI) params(req Request) (openai.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	params := openai.ChatCompletionNewParams{
		Model:         model,
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	if req.System != "" {
		params.Messages = append(params.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		msg, err := openAIMessage(m)
		if err != nil {
			return params, fmt.Errorf("openai: messages[%d]: %w", i, err)
		}
		params.Messages = append(params.Messages, msg)
	}
	for _, t := range req.Tools {
		schema := openai.FunctionParameters{"type": "object", "properties": map[string]any{}}
		if len(t.Parameters) > 0 && string(t.Parameters) != "null" {
			schema = nil
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return params, fmt.Errorf("openai: tool %s: parameters are not a JSON schema object: %w", t.Name, err)
			}
		}
		def := openai.FunctionDefinitionParam{Name: t.Name, Parameters: schema}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		params.Tools = append(params.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if req.MaxTokens > 0 {
		if p.maxCompletionTokens {
			params.MaxCompletionTokens = openai.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = openai.Int(int64(req.MaxTokens))
		}
	}
	return params, nil
}

// openAIMessage maps one conversation message onto the wire.
func openAIMessage(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case RoleUser:
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case RoleAssistant:
		var a openai.ChatCompletionAssistantMessageParam
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = openai.String(m.Content)
		}
		for _, c := range m.ToolCalls {
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID: c.ID,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
						Name:      c.Name,
						Arguments: argumentsText(c.Arguments),
					},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("unknown role %q", m.Role)
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

// openAIStream accumulates the chunks of one streamed completion.
type openAIStream struct {
	chunks  int
	content strings.Builder
	calls   []*openAIToolCall
	byIndex map[int64]*openAIToolCall
	finish  string
	usage   Usage
}

type openAIToolCall struct {
	id, name string
	args     strings.Builder
}

func (a *openAIStream) add(ch openai.ChatCompletionChunk, onDelta func(string)) {
	a.chunks++
	if u := ch.Usage; u.PromptTokens > 0 || u.CompletionTokens > 0 {
		a.usage = Usage{InputTokens: int(u.PromptTokens), OutputTokens: int(u.CompletionTokens)}
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		if text := c.Delta.Content + c.Delta.Refusal; text != "" {
			a.content.WriteString(text)
			if onDelta != nil {
				onDelta(text)
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
func (a *openAIStream) addToolDelta(d openai.ChatCompletionChunkChoiceDeltaToolCall) {
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

// fail maps an SDK error onto a *ProviderError.
func (p *OpenAI) fail(ctx context.Context, err error) error {
	pe := &ProviderError{Provider: p.Name(), Err: err}
	var apiErr *openai.Error
	var streamErr *ssestream.StreamError
	switch {
	case errors.As(err, &apiErr):
		pe.Status = apiErr.StatusCode
		if apiErr.Response != nil {
			pe.RetryAfter = retryAfter(apiErr.Response.Header, time.Now())
		}
		pe.Err = &apiFailure{msg: describeFailure(pe.Status, redact(apiErr.Message, p.apiKey)), err: err}
	case errors.As(err, &streamErr):
		msg, status := streamErrorDetails(streamErr.Event.Data)
		pe.Status = status
		pe.Err = &apiFailure{msg: "the LLM server reported an error mid-stream: " + redact(msg, p.apiKey), err: err}
	case ctx.Err() == nil:
		pe.Err = fmt.Errorf("could not reach the LLM server at %s (check llm.base_url and that the server is running): %w", p.baseURL, err)
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(pe.Err, cerr) {
		pe.Err = fmt.Errorf("%w (%w)", pe.Err, cerr)
	}
	return pe
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

// apiFailure is an API error with a message of our own; it unwraps to the
// SDK's error so errors.As still finds it.
type apiFailure struct {
	msg string
	err error
}

func (e *apiFailure) Error() string { return e.msg }
func (e *apiFailure) Unwrap() error { return e.err }

// describeFailure says what an HTTP status from an LLM API means and what to
// do about it, followed by the server's own message.
func describeFailure(status int, serverMsg string) string {
	var what string
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		what = "the LLM server refused the credentials; check llm.api_key"
	case status == http.StatusNotFound:
		what = "the LLM server does not know this model or endpoint; check llm.model and llm.base_url"
	case status == http.StatusTooManyRequests:
		what = "the LLM server is rate limiting; wait a moment and try again"
	case status >= 500:
		what = "the LLM server failed; try again later"
	case status >= 400:
		what = "the LLM server rejected the request"
	default:
		what = fmt.Sprintf("unexpected HTTP %d from the LLM server", status)
	}
	if serverMsg == "" {
		return what
	}
	const maxLen = 500
	if len(serverMsg) > maxLen {
		serverMsg = strings.ToValidUTF8(serverMsg[:maxLen], "") + "…"
	}
	return what + ": " + serverMsg
}

// redact removes the API key from text a server sent back.
func redact(text, key string) string {
	if len(key) < 4 {
		return text
	}
	return strings.ReplaceAll(text, key, "[redacted]")
}
