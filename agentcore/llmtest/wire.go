package llmtest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// wireRequest is the part of an OpenAI chat request the server reads.
type wireRequest struct {
	Model         string        `json:"model"`
	Messages      []wireMessage `json:"messages"`
	Tools         []wireTool    `json:"tools"`
	Stream        bool          `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	MaxTokens           int `json:"max_tokens"`
	MaxCompletionTokens int `json:"max_completion_tokens"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name string `json:"name"`
	} `json:"function"`
}

// decodeRequest reads and decodes a chat request body.
func decodeRequest(r *http.Request) (wireRequest, Request, error) {
	body, err := io.ReadAll(io.LimitReader(r.Body, 32<<20))
	if err != nil {
		return wireRequest{}, Request{}, fmt.Errorf("llmtest: read body: %w", err)
	}
	var wr wireRequest
	if err := json.Unmarshal(body, &wr); err != nil {
		return wireRequest{}, Request{}, fmt.Errorf("llmtest: body is not a chat request: %w", err)
	}
	req := Request{Model: wr.Model, Stream: wr.Stream, MaxTokens: wr.MaxCompletionTokens, Body: body}
	if req.MaxTokens == 0 {
		req.MaxTokens = wr.MaxTokens
	}
	for _, t := range wr.Tools {
		req.Tools = append(req.Tools, t.Function.Name)
	}
	for i, m := range wr.Messages {
		text, images, err := contentText(m.Content)
		if err != nil {
			return wireRequest{}, Request{}, fmt.Errorf("llmtest: messages[%d].content: %w", i, err)
		}
		msg := Message{Role: m.Role, Content: text, ToolCallID: m.ToolCallID, Images: images}
		for _, c := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments})
		}
		req.Messages = append(req.Messages, msg)
	}
	return wr, req, nil
}

// contentText reads a content that is null, a string or an array of
// parts: the text of its text parts, joined, and its image parts.
func contentText(raw json.RawMessage) (string, []Image, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil, nil
	}
	var parts []struct {
		Type     string `json:"type"`
		Text     string `json:"text"`
		ImageURL *struct {
			URL string `json:"url"`
		} `json:"image_url"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, fmt.Errorf("want a string or an array of parts: %w", err)
	}
	var b strings.Builder
	var images []Image
	for i, p := range parts {
		switch p.Type {
		case "text":
			b.WriteString(p.Text)
		case "image_url":
			if p.ImageURL == nil {
				return "", nil, fmt.Errorf("part %d: image_url part without image_url", i)
			}
			im, err := parseImageURL(p.ImageURL.URL)
			if err != nil {
				return "", nil, fmt.Errorf("part %d: %w", i, err)
			}
			images = append(images, im)
		default:
			return "", nil, fmt.Errorf("part %d: unknown type %q", i, p.Type)
		}
	}
	return b.String(), images, nil
}

// validate applies the checks the real API makes on conversation shape and
// returns its complaint, or "" when the request is fine.
func validate(req Request) string {
	if len(req.Messages) == 0 {
		return "'messages' must contain at least one message"
	}
	pending := map[string]bool{} // tool call ids still waiting for a result
	for i, m := range req.Messages {
		switch m.Role {
		case "system", "developer", "user", "assistant", "tool":
		default:
			return fmt.Sprintf("messages[%d].role %q is not supported", i, m.Role)
		}
		if m.Role != "tool" && len(pending) > 0 {
			return "an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"
		}
		switch m.Role {
		case "assistant":
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Name == "" {
					return fmt.Sprintf("messages[%d].tool_calls: id and function.name are required", i)
				}
				pending[c.ID] = true
			}
		case "tool":
			if !pending[m.ToolCallID] {
				return fmt.Sprintf("messages[%d]: messages with role 'tool' must be a response to a preceding message with 'tool_calls' (tool_call_id %q)", i, m.ToolCallID)
			}
			delete(pending, m.ToolCallID)
		}
	}
	if len(pending) > 0 {
		return "an assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'"
	}
	return ""
}

// usageFor counts words as tokens, so usage is deterministic and non-zero;
// the request's CachedTokens are reported as prompt_tokens_details, as
// OpenAI does, within prompt_tokens.
func usageFor(req Request, r Reply) map[string]any {
	in := 0
	for _, m := range req.Messages {
		in += messageTokens(m)
	}
	out := len(strings.Fields(r.Text)) + len(r.ToolCalls)
	return map[string]any{
		"prompt_tokens": in, "completion_tokens": out, "total_tokens": in + out,
		"prompt_tokens_details": map[string]int{"cached_tokens": req.CachedTokens},
	}
}

// completion renders one reply on the wire.
type completion struct {
	id      string
	model   string
	created int64
	reply   Reply
	usage   map[string]any
}

func (c completion) finishReason() string {
	switch {
	case c.reply.FinishReason != "":
		return c.reply.FinishReason
	case len(c.reply.ToolCalls) > 0:
		return "tool_calls"
	}
	return "stop"
}

func (c completion) wireToolCalls() []map[string]any {
	var calls []map[string]any
	for _, tc := range c.reply.ToolCalls {
		calls = append(calls, map[string]any{
			"id":       tc.ID,
			"type":     "function",
			"function": map[string]any{"name": tc.Name, "arguments": tc.Arguments},
		})
	}
	return calls
}

// writeJSON answers a non-streaming request.
func (c completion) writeJSON(w http.ResponseWriter) {
	msg := map[string]any{"role": "assistant", "content": c.reply.Text, "refusal": nil}
	if c.reply.Text == "" && len(c.reply.ToolCalls) > 0 {
		msg["content"] = nil
	}
	if calls := c.wireToolCalls(); calls != nil {
		msg["tool_calls"] = calls
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id":                 c.id,
		"object":             "chat.completion",
		"created":            c.created,
		"model":              c.model,
		"system_fingerprint": nil,
		"choices": []map[string]any{{
			"index":         0,
			"message":       msg,
			"logprobs":      nil,
			"finish_reason": c.finishReason(),
		}},
		"usage": c.usage,
	})
}

// writeStream answers a streaming request with SSE chunks shaped like
// OpenAI's: a role chunk, content split at word boundaries, each tool call's
// id and name followed by its arguments in several pieces, a finish chunk,
// the usage chunk when asked for, and [DONE]. Before each word it waits
// the reply's Pace with wait, and stops when wait says to.
func (c completion) writeStream(w http.ResponseWriter, includeUsage bool, wait func(time.Duration) bool) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if flusher != nil {
			flusher.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		ch := map[string]any{
			"id":                 c.id,
			"object":             "chat.completion.chunk",
			"created":            c.created,
			"model":              c.model,
			"system_fingerprint": nil,
			"choices": []map[string]any{{
				"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish,
			}},
		}
		if includeUsage {
			ch["usage"] = nil
		}
		return ch
	}

	send(chunk(map[string]any{"role": "assistant", "content": "", "refusal": nil}, nil))
	for _, piece := range splitWords(c.reply.Text) {
		if !wait(c.reply.Pace) {
			return
		}
		send(chunk(map[string]any{"content": piece}, nil))
	}
	if c.reply.StreamError != "" {
		send(map[string]any{"error": map[string]any{
			"message": c.reply.StreamError, "type": "server_error", "param": nil, "code": nil,
		}})
		return
	}
	for i, tc := range c.reply.ToolCalls {
		send(chunk(map[string]any{"tool_calls": []map[string]any{{
			"index": i, "id": tc.ID, "type": "function",
			"function": map[string]any{"name": tc.Name, "arguments": ""},
		}}}, nil))
		for _, piece := range splitBytes(tc.Arguments, 5) {
			send(chunk(map[string]any{"tool_calls": []map[string]any{{
				"index": i, "function": map[string]any{"arguments": piece},
			}}}, nil))
		}
	}
	send(chunk(map[string]any{}, c.finishReason()))
	if includeUsage {
		send(map[string]any{
			"id": c.id, "object": "chat.completion.chunk", "created": c.created, "model": c.model,
			"system_fingerprint": nil, "choices": []any{}, "usage": c.usage,
		})
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

// splitWords cuts s after each space, so the pieces concatenate to s.
func splitWords(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, ' ')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

// splitBytes cuts s into pieces of about n bytes on rune boundaries.
func splitBytes(s string, n int) []string {
	var out []string
	for s != "" {
		end := min(n, len(s))
		for end < len(s) && !utf8.RuneStart(s[end]) {
			end++
		}
		out = append(out, s[:end])
		s = s[end:]
	}
	return out
}
