package agentcore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/anthropics/anthropic-sdk-go/v2"
)

// anthropicStream accumulates the events of one streamed Messages API
// reply into the message, with the SDK's Message.Accumulate, and passes
// the text so far on as it grows.
type anthropicStream struct {
	onText  func(string) // receives the text so far as it grows; may be nil
	msg     anthropic.Message
	events  int
	stopped bool // message_stop came: the reply is whole
	text    strings.Builder
	// inputs are the tool_use blocks' input JSON as streamed, by block
	// index. Accumulate empties an input that is not JSON when its block
	// stops; the model's text is kept here so the loop can show it what
	// it sent.
	inputs map[int64]*strings.Builder
}

// add takes one event.
func (a *anthropicStream) add(ev anthropic.MessageStreamEventUnion) error {
	a.events++
	if ev.Type == "content_block_delta" && ev.Delta.Type == "input_json_delta" {
		if a.inputs == nil {
			a.inputs = map[int64]*strings.Builder{}
		}
		if a.inputs[ev.Index] == nil {
			a.inputs[ev.Index] = &strings.Builder{}
		}
		a.inputs[ev.Index].WriteString(ev.Delta.PartialJSON)
	}
	if err := a.msg.Accumulate(ev); err != nil {
		return err
	}
	switch {
	case ev.Type == "content_block_delta" && ev.Delta.Type == "text_delta" && ev.Delta.Text != "":
		a.text.WriteString(ev.Delta.Text)
		if a.onText != nil {
			a.onText(a.text.String())
		}
	case ev.Type == "message_stop":
		a.stopped = true
	}
	return nil
}

// response is the reply the events made: its text blocks joined, its
// tool_use blocks as tool calls (input that is not JSON kept as a JSON
// string, see toolArguments), usage and stop reason.
func (a *anthropicStream) response() Response {
	resp := Response{
		StopReason: string(a.msg.StopReason),
		Usage:      anthropicUsage(a.msg.Usage),
	}
	var text strings.Builder
	for i, b := range a.msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			input := string(b.Input)
			if streamed, ok := a.inputs[int64(i)]; ok {
				input = streamed.String()
			}
			args := json.RawMessage(strings.TrimSpace(input))
			if len(args) == 0 || !json.Valid(args) {
				args = toolArguments(input)
			}
			resp.ToolCalls = append(resp.ToolCalls, ToolCall{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	resp.Content = text.String()
	return resp
}

// anthropicUsage is the usage the API reported: it counts the input read
// without the cache, the input read from it and the input written to it
// apart, as Usage does. A negative count, which no real reply has, is 0.
func anthropicUsage(u anthropic.Usage) Usage {
	return Usage{
		InputTokens:      tokens(u.InputTokens),
		OutputTokens:     tokens(u.OutputTokens),
		CacheReadTokens:  tokens(u.CacheReadInputTokens),
		CacheWriteTokens: tokens(u.CacheCreationInputTokens),
	}
}

// streamFailure maps what ended a stream early onto a *ProviderError: an
// error event the server sent (retryable, as the request was taken), or a
// failure of the call or its body.
func (p *Anthropic) streamFailure(ctx context.Context, err error) error {
	var apiErr *anthropic.Error
	if errors.As(err, &apiErr) && apiErr.StatusCode/100 == 2 {
		raw := []byte(apiErr.RawJSON())
		code := errorCode(raw)
		return &ProviderError{Provider: p.Name(), Status: anthropicStreamStatus(code), Code: code, Err: errors.New(
			"the LLM server reported an error mid-stream: " + redact(errorMessage(raw), p.api.apiKey))}
	}
	return p.api.failRead(ctx, err)
}

// anthropicStreamStatus is the HTTP status an error event's type stands
// for, when it is one that says to wait or try again; 0 otherwise, which
// is retryable too: the server took the request and failed answering it.
func anthropicStreamStatus(errorType string) int {
	switch errorType {
	case "overloaded_error":
		return 529
	case "rate_limit_error":
		return http.StatusTooManyRequests
	case "api_error":
		return http.StatusInternalServerError
	}
	return 0
}

// incomplete reports why a stream that ended without an error did not
// make a whole reply, or nil when it did.
func (a *anthropicStream) incomplete(p *Anthropic) error {
	switch {
	case a.events == 0:
		return &ProviderError{Provider: p.Name(), Err: fmt.Errorf(
			"the LLM server at %s sent an empty stream; check that %s.base_url points at Anthropic's Messages API", p.api.baseURL, p.api.config)}
	case !a.stopped:
		return &ProviderError{Provider: p.Name(), Err: errors.New(
			"the LLM server's stream ended before the model finished; try again")}
	}
	return nil
}
