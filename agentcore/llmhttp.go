package agentcore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The providers speak to their APIs with net/http and encoding/json rather
// than the vendors' Go SDKs: the two calls used here (chat, embeddings) are
// a few JSON shapes, while linking openai-go and anthropic-sdk-go made the
// daemon 25 MB larger and 7.7 MiB heavier in memory at idle — their package
// initialisers register every type of the whole API by reflection, so the
// linker cannot drop any of it (docs/benchmarks.md). The SDKs stay as the
// tests' reference for the wire format (sdk_wire_test.go).

// maxErrorBody bounds how much of a failed answer is read for its message.
const maxErrorBody = 64 << 10

// llmAPI is the HTTP plumbing the LLM providers share: a JSON POST whose
// failures become *ProviderError saying what to do next, with the API key
// kept out of every message.
type llmAPI struct {
	provider string        // ProviderError.Provider: "openai", "anthropic"
	baseURL  string        // as configured, for messages; paths are joined to it
	apiKey   string        // only to redact it from what servers send back
	header   http.Header   // authentication and version headers of every call
	client   *http.Client  // never nil
	timeout  time.Duration // bounds one call, its body included; 0 means none
}

// call is one request in flight: its response (2xx) and the cancel of its
// timeout, which the caller runs once the body is read.
type call struct {
	resp   *http.Response
	cancel context.CancelFunc
}

// close releases the call's body and timeout.
func (c *call) close() {
	_ = c.resp.Body.Close()
	c.cancel()
}

// send encodes body, a JSON object, with the encoded tool list spliced in
// (encodeWithTools) and posts it to path.
func (a *llmAPI) send(ctx context.Context, path, accept string, body any, tools json.RawMessage) (*call, error) {
	payload, err := encodeWithTools(body, tools)
	if err != nil {
		return nil, fmt.Errorf("%s: encode request: %w", a.provider, err)
	}
	return a.post(ctx, path, accept, payload)
}

// post sends payload, a JSON body, to path (relative to the base URL). A
// non-2xx answer is returned as a *ProviderError carrying the server's
// message and its Retry-After; the caller must close a returned call.
func (a *llmAPI) post(ctx context.Context, path, accept string, payload []byte) (*call, error) {
	cctx, cancel := ctx, context.CancelFunc(func() {})
	if a.timeout > 0 {
		cctx, cancel = context.WithTimeout(ctx, a.timeout)
	}
	req, err := http.NewRequestWithContext(cctx, http.MethodPost, strings.TrimRight(a.baseURL, "/")+"/"+path, bytes.NewReader(payload))
	if err != nil {
		cancel()
		return nil, &ProviderError{Provider: a.provider, Err: fmt.Errorf(
			"llm.base_url %q is not a usable URL: %w", a.baseURL, err)}
	}
	for k, v := range a.header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "switchboard")
	resp, err := a.client.Do(req)
	if err != nil {
		cancel()
		return nil, a.fail(ctx, err)
	}
	if resp.StatusCode/100 != 2 {
		defer cancel()
		defer resp.Body.Close()
		raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return nil, &ProviderError{
			Provider:   a.provider,
			Status:     resp.StatusCode,
			RetryAfter: retryAfter(resp.Header, time.Now()),
			Code:       errorCode(raw),
			Err:        errors.New(describeFailure(resp.StatusCode, redact(errorMessage(raw), a.apiKey))),
		}
	}
	return &call{resp: resp, cancel: cancel}, nil
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
			pe.Err = fmt.Errorf("the LLM server at %s did not finish answering within %s (llm.timeout): %w", a.baseURL, a.timeout, err)
		} else {
			pe.Err = fmt.Errorf("could not reach the LLM server at %s (check llm.base_url and that the server is running): %w", a.baseURL, err)
		}
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(pe.Err, cerr) {
		pe.Err = fmt.Errorf("%w (%w)", pe.Err, cerr)
	}
	return pe
}

// failRead is fail for an error while reading a 2xx answer: its body broke
// off or is not what the API sends.
func (a *llmAPI) failRead(ctx context.Context, err error) error {
	var pe *ProviderError
	if errors.As(err, &pe) || ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return a.fail(ctx, err)
	}
	return &ProviderError{Provider: a.provider, Err: fmt.Errorf(
		"the answer of the LLM server at %s broke off or is not valid; try again: %w", a.baseURL, err)}
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

// llmWriteBuffer is the write buffer of each HTTP/1.1 connection to the
// LLM server: room for a request with its tool list and some history, so
// that it leaves in one write. With net/http's 4 KiB, a request body went
// out in two, and for the second the connection's ReadFrom (through io.Copy)
// allocated a buffer as large as the rest of the body, on every request:
// 10 KiB a message under load, an eighth of all the daemon allocated
// (docs/benchmarks.md, twenty-second round). The price is 28 KiB more per
// open connection; idle ones close after 90 s. (HTTP/2, which TLS servers
// mostly offer, writes through buffers of its own.)
const llmWriteBuffer = 32 << 10

// llmTransport is http.DefaultTransport with room for idleLLMConns idle
// connections to one host and llmWriteBuffer per connection. The default
// keeps 2 idle connections, so with more runs calling the model at once
// every call beyond the second opened a connection (a TLS handshake,
// against a real server) and closed it after the reply.
func llmTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = idleLLMConns
	t.MaxIdleConns = max(t.MaxIdleConns, idleLLMConns)
	t.WriteBufferSize = llmWriteBuffer
	return t
}

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
