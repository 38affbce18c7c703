package agentcore

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// openAIChunk is what openAIStream reads of one chat.completion.chunk,
// decoded by encoding/json. The SDK's ChatCompletionChunk keeps the raw
// JSON and presence of every field: a chunk read into it took about 2.4
// times the CPU, and a streamed answer is a chunk every token or so
// (BenchmarkOpenAIStreamDecode).
type openAIChunk struct {
	Choices []struct {
		Index int64 `json:"index"`
		Delta struct {
			Content   string            `json:"content"`
			Refusal   string            `json:"refusal"`
			ToolCalls []openAIToolDelta `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage openAIChunkUsage `json:"usage"`
}

// UnmarshalJSON decodes a chunk, leaving a field of an unexpected type
// zero, as the SDK's decoder does: compatible servers put odd values in
// fields this client does not need ("usage": "n/a").
func (c *openAIChunk) UnmarshalJSON(data []byte) error {
	type plain openAIChunk
	err := json.Unmarshal(data, (*plain)(c))
	if _, odd := errors.AsType[*json.UnmarshalTypeError](err); odd {
		return nil // encoding/json decoded the rest
	}
	return err
}

// openAIChunkUsage is a chunk's token counts (the last chunk's, when the
// request asks for them).
type openAIChunkUsage struct {
	PromptTokens        int64 `json:"prompt_tokens"`
	CompletionTokens    int64 `json:"completion_tokens"`
	PromptTokensDetails struct {
		CachedTokens int64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
}

// openAIToolDelta is one piece of a streamed tool call.
type openAIToolDelta struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// openAIStream accumulates the chunks of one streamed completion. It is
// used rather than the SDK's ChatCompletionAccumulator, which refuses a
// chunk whose completion id changes or whose tool call brings a new id at
// a known index: compatible servers do both (some send every call whole at
// index 0), and a refused chunk would lose the call.
type openAIStream struct {
	onText  func(string) // receives the content so far as it grows; may be nil
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

// add takes one chunk: usage, the first choice's text and tool call pieces
// and its finish reason.
func (a *openAIStream) add(ch openAIChunk) {
	a.chunks++
	if u := ch.Usage; u.PromptTokens > 0 || u.CompletionTokens > 0 {
		a.usage = openAIUsage(u)
	}
	for _, c := range ch.Choices {
		if c.Index != 0 {
			continue
		}
		if text := c.Delta.Content + c.Delta.Refusal; text != "" {
			a.content.WriteString(text)
			if a.onText != nil {
				a.onText(a.content.String())
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

// openAIUsage is the usage a server reported. Its prompt_tokens include
// the cached_tokens of prompt_tokens_details, which Usage counts apart:
// InputTokens are the rest. A server that reports more cached tokens than
// prompt tokens is taken to have cached the whole prompt, never to have
// read fewer than none; a negative count is 0.
func openAIUsage(u openAIChunkUsage) Usage {
	prompt := tokens(u.PromptTokens)
	cached := min(tokens(u.PromptTokensDetails.CachedTokens), prompt)
	return Usage{InputTokens: prompt - cached, OutputTokens: tokens(u.CompletionTokens), CacheReadTokens: cached}
}

// addToolDelta merges one tool call piece. Pieces are keyed by index; a new
// id at a known index starts a new call (some servers send every call whole
// at index 0).
func (a *openAIStream) addToolDelta(d openAIToolDelta) {
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

// response is the completion the chunks made.
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
