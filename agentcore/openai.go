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
	// Config is the config section that sets this server up, named in
	// error messages ("check media.vision.api_key"); "" is "llm".
	Config string
}

// OpenAI is a Provider for the OpenAI chat completions API and the servers
// that speak it, on the openai-go SDK. It streams every call. Create it with
// NewOpenAI.
type OpenAI struct {
	api llmAPI
	// client carries the SDK options only: its Post sends each request
	// (no service of it is used, and unlike openai.NewClient it reads no
	// environment variables).
	client openai.Client
	model  string
	tools  openAIToolCache
	// maxCompletionTokens: OpenAI's own API wants max_completion_tokens;
	// compatible servers commonly only know max_tokens.
	maxCompletionTokens bool
}

// openAIClientOptions returns the plumbing and SDK options of an
// OpenAI-compatible API: the base URL (OpenAI's when empty), the bearer key
// (a placeholder when empty: local servers need none), the HTTP client and
// timeout, and no SDK retries: WithRetry retries, with its own limits and
// log, and the SDK's two retries under it would make each of its attempts
// up to three calls. The options are given to the services directly rather
// than through openai.NewClient, which would read OPENAI_API_KEY and
// OPENAI_BASE_URL from the environment: the daemon takes its key from its
// config only.
func openAIClientOptions(o OpenAIOptions) (llmAPI, []option.RequestOption) {
	base, key, timeout := o.BaseURL, o.APIKey, o.Timeout
	if base == "" {
		base = openAIDefaultBaseURL
	}
	api := newLLMAPI("openai", o.Config, base, key, timeout)
	bearer := key
	if bearer == "" {
		bearer = openAINoKey
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithAPIKey(bearer),
		option.WithHTTPClient(httpClientOr(o.HTTPClient)),
		option.WithMaxRetries(0),
		option.WithHeader("User-Agent", "switchboard"),
		option.WithMiddleware(func(r *http.Request, next option.MiddlewareNext) (*http.Response, error) {
			return api.checkStatus(r, next)
		}),
	}
	if timeout > 0 {
		opts = append(opts, option.WithRequestTimeout(timeout))
	}
	return api, opts
}

// NewOpenAI returns a provider for the API at opts.BaseURL. It does no I/O,
// reads no environment variables and does not retry; wrap the provider with
// WithRetry.
func NewOpenAI(opts OpenAIOptions) *OpenAI {
	api, ro := openAIClientOptions(opts)
	return &OpenAI{
		api:                 api,
		client:              openai.Client{Options: ro},
		model:               opts.Model,
		maxCompletionTokens: strings.Contains(api.baseURL, "api.openai.com"),
	}
}

// Name returns "openai".
func (p *OpenAI) Name() string { return "openai" }

// Chat streams one chat completion, passing the content so far to onText
// as it grows, and returns the accumulated response. Every failure is a
// *ProviderError, except a Request that cannot be encoded (a message with an
// unknown role, a tool whose Parameters are not a JSON object).
func (p *OpenAI) Chat(ctx context.Context, req Request, onText func(soFar string)) (Response, error) {
	body, err := p.body(req)
	if err != nil {
		return Response{}, err
	}
	if p.api.urlErr != nil {
		return Response{}, p.api.urlErr
	}
	// As the SDK's NewStreaming, but the body is encoded here (see
	// openAIRequest) and each event decodes into openAIChunk rather than
	// the SDK's ChatCompletionChunk (see openAIChunk).
	var raw *http.Response
	err = p.client.Post(ctx, "chat/completions", body, &raw)
	stream := ssestream.NewStream[openAIChunk](ssestream.NewDecoder(raw), err)
	defer stream.Close()
	acc := openAIStream{onText: onText}
	for stream.Next() {
		acc.add(stream.Current())
	}
	if err := stream.Err(); err != nil {
		return Response{}, p.streamFailure(ctx, err)
	}
	if acc.chunks == 0 {
		return Response{}, &ProviderError{Provider: p.Name(), Err: fmt.Errorf(
			"the LLM server at %s sent an empty stream; check that %s.base_url points at an OpenAI-compatible /v1 endpoint", p.api.baseURL, p.api.config)}
	}
	if acc.finish == "" {
		return Response{}, &ProviderError{Provider: p.Name(), Err: errors.New(
			"the LLM server's stream ended before the model finished; try again")}
	}
	return acc.response(), nil
}

// streamFailure maps what ended a stream early onto a *ProviderError: an
// error event the server sent, an event that is not JSON, or a failure of
// the call or its body.
func (p *OpenAI) streamFailure(ctx context.Context, err error) error {
	var streamErr *ssestream.StreamError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &streamErr):
		msg, status := streamErrorDetails(streamErr.Event.Data)
		return &ProviderError{Provider: p.Name(), Status: status, Err: errors.New(
			"the LLM server reported an error mid-stream: " + redact(msg, p.api.apiKey))}
	case errors.As(err, &syntaxErr):
		return &ProviderError{Provider: p.Name(), Err: fmt.Errorf(
			"the LLM server sent a stream event that is not JSON (%w); check that %s.base_url points at an OpenAI-compatible /v1 endpoint", err, p.api.config)}
	}
	return p.api.failRead(ctx, err)
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
