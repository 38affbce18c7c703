package agentcore

import (
	"fmt"
	"strings"

	"github.com/openai/openai-go/v3"
)

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
func (a *openAIStream) add(ch openai.ChatCompletionChunk) {
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
func openAIUsage(u openai.CompletionUsage) Usage {
	prompt := tokens(u.PromptTokens)
	cached := min(tokens(u.PromptTokensDetails.CachedTokens), prompt)
	return Usage{InputTokens: prompt - cached, OutputTokens: tokens(u.CompletionTokens), CacheReadTokens: cached}
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
