package agentcore

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"
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
	// Timeout bounds one call, the streamed body included; 0 means none.
	Timeout time.Duration
	// MaxTokens is the reply budget when a Request sets none (default 4096).
	MaxTokens int
}

// Anthropic is a Provider for Anthropic's Messages API, on the
// anthropic-sdk-go SDK. It streams every call, so onText sees the reply's
// text as the model writes it. Create it with NewAnthropic.
type Anthropic struct {
	api       llmAPI
	client    anthropic.MessageService
	model     string
	maxTokens int
}

// NewAnthropic returns a provider for the API at opts.BaseURL. It does no
// I/O, reads no environment variables and does not retry (the SDK's own
// retries are off, for the reason openAIClientOptions gives); wrap the
// provider with WithRetry.
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
	p := &Anthropic{api: newLLMAPI("anthropic", "", base, opts.APIKey, opts.Timeout), model: opts.Model, maxTokens: maxTokens}
	ro := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithBaseURL(base),
		option.WithAPIKey(key),
		option.WithHTTPClient(httpClientOr(opts.HTTPClient)),
		option.WithMaxRetries(0),
		option.WithHeader("User-Agent", "switchboard"),
		option.WithMiddleware(p.api.checkStatus),
		// The agent's "llm.chat" span is the call's span. The SDK would add
		// its own through the global tracer provider, and put what people
		// typed in it when ANTHROPIC_OPEN_TELEMETRY_TRACES_CONTENT_MODE says so.
		option.WithoutOpenTelemetry(),
	}
	if opts.Timeout > 0 {
		ro = append(ro, option.WithRequestTimeout(opts.Timeout))
	}
	p.client = anthropic.NewMessageService(ro...)
	return p
}

// Name returns "anthropic".
func (p *Anthropic) Name() string { return "anthropic" }

// Chat streams one Messages API request, passing the reply's text so far
// to onText each time it grows, and returns the reply. Every failure is a
// *ProviderError, except a Request that cannot be encoded; an error the
// server reports mid-stream is one that may be retried.
func (p *Anthropic) Chat(ctx context.Context, req Request, onText func(soFar string)) (Response, error) {
	params, err := p.params(req)
	if err != nil {
		return Response{}, err
	}
	if p.api.urlErr != nil {
		return Response{}, p.api.urlErr
	}
	stream := p.client.NewStreaming(ctx, params)
	defer stream.Close()
	acc := anthropicStream{onText: onText}
	for stream.Next() {
		if err := acc.add(stream.Current()); err != nil {
			return Response{}, &ProviderError{Provider: p.Name(), Err: fmt.Errorf(
				"the LLM server's stream is not what the Messages API sends (check %s.base_url); try again: %w", p.api.config, err)}
		}
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.streamFailure(ctx, err)
	}
	if err := acc.incomplete(p); err != nil {
		return Response{}, err
	}
	return acc.response(), nil
}

// params maps req onto the SDK's request. System messages join the system
// prompt; consecutive messages of one side are merged into one turn, so the
// results of parallel tool calls travel in a single user message. The
// stable prefix carries cache breakpoints (markCachePrefix).
func (p *Anthropic) params(req Request) (anthropic.MessageNewParams, error) {
	model := req.Model
	if model == "" {
		model = p.model
	}
	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = p.maxTokens
	}
	params := anthropic.MessageNewParams{Model: anthropic.Model(model), MaxTokens: int64(maxTokens)}
	if req.System != "" {
		params.System = append(params.System, anthropic.TextBlockParam{Text: req.System})
	}
	for i, m := range fitRequestImages(req.Messages, anthropicImageLimits) {
		if m.Role == RoleSystem {
			if m.Content != "" {
				params.System = append(params.System, anthropic.TextBlockParam{Text: m.Content})
			}
			continue
		}
		assistant, blocks, err := anthropicBlocks(m)
		if err != nil {
			return params, fmt.Errorf("anthropic: messages[%d]: %w", i, err)
		}
		if len(blocks) == 0 {
			continue // the API rejects empty turns and empty text blocks
		}
		params.Messages = appendTurn(params.Messages, assistant, blocks)
	}
	for _, t := range req.Tools {
		schema, err := anthropicSchema(t.Parameters)
		if err != nil {
			return params, fmt.Errorf("anthropic: tool %s: %w", t.Name, err)
		}
		tool := anthropic.ToolUnionParamOfTool(schema, t.Name)
		if t.Description != "" {
			tool.OfTool.Description = anthropic.String(t.Description)
		}
		params.Tools = append(params.Tools, tool)
	}
	markCachePrefix(&params)
	return params, nil
}

// anthropicBlocks maps a user, tool or assistant message onto content
// blocks, and says whether they are the assistant's.
func anthropicBlocks(m Message) (assistant bool, blocks []anthropic.ContentBlockParamUnion, err error) {
	switch m.Role {
	case RoleUser:
		// Images go first: Anthropic's advice, as the model reads the
		// text about a picture better after the picture.
		for _, im := range m.Images {
			if im.Data != nil {
				blocks = append(blocks, anthropic.NewImageBlockBase64(im.Type, base64.StdEncoding.EncodeToString(im.Data)))
			}
		}
		if m.Content != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
	case RoleTool:
		blocks = append(blocks, toolResult(m))
	case RoleAssistant:
		assistant = true
		if m.Content != "" {
			blocks = append(blocks, anthropic.NewTextBlock(m.Content))
		}
		for _, c := range m.ToolCalls {
			blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, toolInput(c.Arguments), c.Name))
		}
	default:
		return false, nil, fmt.Errorf("unknown role %q", m.Role)
	}
	return assistant, blocks, nil
}

// appendTurn adds blocks to the conversation: to its last turn when that is
// the same side's, else as a new turn.
func appendTurn(turns []anthropic.MessageParam, assistant bool, blocks []anthropic.ContentBlockParamUnion) []anthropic.MessageParam {
	if n := len(turns); n > 0 && (turns[n-1].OfAssistant != nil) == assistant {
		if last := &turns[n-1]; assistant {
			last.OfAssistant.Content = append(last.OfAssistant.Content, blocks...)
		} else {
			last.OfUser.Content = append(last.OfUser.Content, blocks...)
		}
		return turns
	}
	if assistant {
		return append(turns, anthropic.NewAssistantMessage(blocks...))
	}
	return append(turns, anthropic.NewUserMessage(blocks...))
}

// toolResult is the tool_result block answering a tool message; an empty
// result has no content block, as the API rejects empty text.
func toolResult(m Message) anthropic.ContentBlockParamUnion {
	r := anthropic.ToolResultBlockParam{ToolUseID: m.ToolCallID}
	if m.IsError {
		r.IsError = anthropic.Bool(true)
	}
	if m.Content != "" {
		r.Content = []anthropic.ToolResultBlockParamContentUnion{{OfText: &anthropic.TextBlockParam{Text: m.Content}}}
	}
	return anthropic.ContentBlockParamUnion{OfToolResult: &r}
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

// anthropicSchema maps a JSON schema object onto a tool's input schema: its
// type is always "object", properties are always present, required keeps
// only names and every other member goes along as it is. The schema is
// sent as JSON encoded here, with its members sorted: the SDK writes the
// members it has no field for in map order, which would change the tools,
// the start of the cached prompt prefix, from one request to the next.
func anthropicSchema(raw json.RawMessage) (anthropic.ToolInputSchemaParam, error) {
	m := map[string]any{}
	if len(raw) > 0 && string(raw) != "null" {
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			if err == nil {
				err = errors.New("null")
			}
			return anthropic.ToolInputSchemaParam{}, fmt.Errorf("parameters are not a JSON schema object: %w", err)
		}
	}
	m["type"] = "object"
	if m["properties"] == nil {
		m["properties"] = map[string]any{}
	}
	if v, ok := m["required"]; ok {
		list, _ := v.([]any)
		var names []string
		for _, r := range list {
			if name, ok := r.(string); ok {
				names = append(names, name)
			}
		}
		delete(m, "required")
		if len(names) > 0 {
			m["required"] = names
		}
	}
	b, err := json.Marshal(m) // encoding/json sorts map keys, nested ones too
	if err != nil {
		return anthropic.ToolInputSchemaParam{}, fmt.Errorf("parameters: %w", err)
	}
	return param.Override[anthropic.ToolInputSchemaParam](json.RawMessage(b)), nil
}
