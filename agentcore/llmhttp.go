package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxErrorBody bounds how much of a failed answer is read for its message.
const maxErrorBody = 64 << 10

// llmAPI is what the providers share around the vendors' SDKs: the reading
// of failed answers into a *ProviderError saying what to do next, with the
// API key kept out of every message. The SDKs' own errors cannot be used
// for that: they need a JSON body with an "error" member, while proxies and
// compatible servers answer with HTML pages, plain text or {"detail": …}.
type llmAPI struct {
	provider string        // ProviderError.Provider: "openai", "anthropic"
	config   string        // the config section naming the server, for messages: "llm", "media.tts"
	baseURL  string        // as configured, for messages
	apiKey   string        // only to redact it from what servers send back
	timeout  time.Duration // bounds one call, its body included; 0 means none
	urlErr   error         // why baseURL cannot be used, checked before each call
}

// newLLMAPI returns the plumbing for the server at base, configured in
// the config section config ("" is "llm").
func newLLMAPI(provider, config, base, apiKey string, timeout time.Duration) llmAPI {
	if config == "" {
		config = "llm"
	}
	a := llmAPI{provider: provider, config: config, baseURL: base, apiKey: apiKey, timeout: timeout}
	if u, err := url.Parse(base); err != nil || u.Scheme == "" || u.Host == "" {
		if err == nil {
			err = errors.New("it needs a scheme and a host")
		}
		a.urlErr = &ProviderError{Provider: provider, Err: fmt.Errorf(
			"%s.base_url %q is not a usable URL: %w", config, base, err)}
	}
	return a
}

// checkStatus is the SDKs' middleware: it turns an answer other than 2xx
// into a *ProviderError carrying the server's message, its body's code and
// its Retry-After, so the SDK returns it as the call's error.
func (a *llmAPI) checkStatus(req *http.Request, next func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	resp, err := next(req)
	if err != nil || resp.StatusCode/100 == 2 {
		return resp, err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	return nil, &ProviderError{
		Provider:   a.provider,
		Status:     resp.StatusCode,
		RetryAfter: retryAfter(resp.Header, time.Now()),
		Code:       errorCode(raw),
		Err:        errors.New(describeFailure(a.config, resp.StatusCode, redact(errorMessage(raw), a.apiKey))),
	}
}

// fail turns an error of a call (sending it or reading its answer) into a
// *ProviderError; ctx is the caller's, so a cancelled caller is told apart
// from a call that ran out of its own time.
func (a *llmAPI) fail(ctx context.Context, err error) error {
	var pe *ProviderError
	if errors.As(err, &pe) {
		return err
	}
	pe = &ProviderError{Provider: a.provider, Err: err}
	if ctx.Err() == nil {
		if errors.Is(err, context.DeadlineExceeded) {
			pe.Err = fmt.Errorf("the server at %s did not finish answering within %s (%s.timeout): %w", a.baseURL, a.timeout, a.config, err)
		} else {
			pe.Err = fmt.Errorf("could not reach the server at %s (check %s.base_url and that the server is running): %w", a.baseURL, a.config, err)
		}
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(pe.Err, cerr) {
		pe.Err = fmt.Errorf("%w (%w)", pe.Err, cerr)
	}
	return pe
}

// failRead is fail for the error of an SDK call: a failure to send it or
// to get an answer (the client's *url.Error), or else a 2xx answer whose
// body broke off or is not what the API sends.
func (a *llmAPI) failRead(ctx context.Context, err error) error {
	var pe *ProviderError
	var ue *url.Error
	if errors.As(err, &pe) || errors.As(err, &ue) || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return a.fail(ctx, err)
	}
	return &ProviderError{Provider: a.provider, Err: fmt.Errorf(
		"the answer of the server at %s broke off or is not what the API sends (check %s.base_url); try again: %w", a.baseURL, a.config, err)}
}

// errorMessage is the message in an error answer: error.message (OpenAI's
// and Anthropic's shape), message or detail (other compatible servers), or
// else the body's text.
func errorMessage(raw []byte) string {
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  string          `json:"detail"`
	}
	if json.Unmarshal(raw, &body) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(body.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(body.Error, &flat) == nil && flat != "":
			return flat
		case body.Message != "":
			return body.Message
		case body.Detail != "":
			return body.Detail
		}
	}
	return strings.Join(strings.Fields(strings.ToValidUTF8(string(raw), "")), " ")
}

// httpClientOr returns c, or a client of its own when c is nil.
func httpClientOr(c *http.Client) *http.Client {
	if c != nil {
		return c
	}
	return &http.Client{Transport: llmTransport()}
}

// idleLLMConns is how many idle connections to the LLM server a provider
// keeps: about as many as runs call it at once (the router's lane workers).
const idleLLMConns = 64

// llmTransport is http.DefaultTransport with room for idleLLMConns idle
// connections to one host. The default keeps 2, so with more runs calling
// the model at once every call beyond the second would open a connection
// (a TLS handshake, against a real server) and close it after the reply.
func llmTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = idleLLMConns
	t.MaxIdleConns = max(t.MaxIdleConns, idleLLMConns)
	return t
}

// describeFailure says what an HTTP status from the server configured in
// config means and what to do about it, followed by the server's own
// message.
func describeFailure(config string, status int, serverMsg string) string {
	var what string
	switch {
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		what = "the server refused the credentials; check " + config + ".api_key"
	case status == http.StatusNotFound:
		what = "the server does not know this model or endpoint; check " + config + ".model and " + config + ".base_url"
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
