package agentcore

import "github.com/switchboard-chat/switchboard/tools"

// DefaultContextTokens is the token budget of what one model call is sent
// when an agent sets none (agent.context_tokens).
const DefaultContextTokens = 100000

// Token estimates. No tokenizer is exact across the models an agent may
// use, and a tokenizer library needs each model's vocabulary, so the
// budget counts a documented estimate instead: a token per 4 bytes of
// text (English text runs about 4 characters a token, code and other
// scripts fewer bytes a token, which the margin of the budget absorbs), a
// fixed cost per message and per tool call for the wire's framing, and a
// fixed cost per picture, which providers bill by size up to about that.
const (
	bytesPerToken   = 4
	messageOverhead = 4
	// toolFraming is the bytes of a tool schema on the wire beyond its
	// name, description and parameters:
	// {"type":"function","function":{"name":"","description":"","parameters":}}.
	toolFraming = 73
	// emptySchemaBytes is the schema sent for a tool that declares no
	// parameters: {"type":"object","properties":{}}.
	emptySchemaBytes = 33
	// anthropicImageTokens is what Anthropic bills a picture of the
	// largest size it reads without scaling (about 1.15 megapixels).
	anthropicImageTokens = 1600
	// openAIImageTokens is what OpenAI bills a high-detail picture of
	// 1024×1024 (765), with margin for larger ones.
	openAIImageTokens = 1105
)

// tokenCosts estimates the tokens of what a model call is sent, for one
// provider and whether the model is shown pictures.
type tokenCosts struct {
	image int // per picture; 0 when pictures are not sent
}

// costsFor returns the estimate for provider p; vision says whether the
// model is shown the pictures of user messages.
func costsFor(p Provider, vision bool) tokenCosts {
	if !vision {
		return tokenCosts{}
	}
	if p != nil && p.Name() == "anthropic" {
		return tokenCosts{image: anthropicImageTokens}
	}
	return tokenCosts{image: openAIImageTokens}
}

// textTokens estimates the tokens of s.
func textTokens(s string) int { return (len(s) + bytesPerToken - 1) / bytesPerToken }

// message estimates the tokens of m as a model call is sent it: its text,
// its tool calls' names and JSON arguments, a tool result's id and name,
// and its pictures.
func (c tokenCosts) message(m Message) int {
	if m.IsNotice() {
		return 0 // never sent (forModel)
	}
	n := messageOverhead + textTokens(m.Content) + textTokens(m.ToolCallID) + textTokens(m.ToolName)
	for _, tc := range m.ToolCalls {
		n += messageOverhead + textTokens(tc.ID) + textTokens(tc.Name) + textTokens(string(tc.Arguments))
	}
	return n + len(m.Images)*c.image
}

// fixed estimates the tokens every call of a run is sent whatever the
// history: the system prompt and the tool schemas.
func (c tokenCosts) fixed(system string, specs []tools.Spec) int {
	n := messageOverhead + textTokens(system)
	for _, s := range specs {
		// The bytes as they go out, counted rather than encoded (every
		// call counts every tool): a schema written with indentation
		// counts more than it sends.
		params := len(s.Parameters) + htmlEscapes(s.Parameters)
		if params == 0 || string(s.Parameters) == "null" {
			params = emptySchemaBytes
		}
		size := toolFraming + jsonStringLen(s.Name) + jsonStringLen(s.Description) + params
		n += messageOverhead + (size+bytesPerToken-1)/bytesPerToken
	}
	return n
}

// jsonStringLen is the length of s inside a JSON string as encoding/json
// writes it: a quote, a backslash, \n, \r and \t take two bytes, another
// control character or an HTML-special one (<, >, &) six.
func jsonStringLen(s string) int {
	n := len(s)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20 || c == '<' || c == '>' || c == '&':
			n += 5
		}
	}
	return n
}

// htmlEscapes is how many bytes encoding/json adds to JSON b when it
// compacts it: five for each <, > and &, which it writes as \u003c and so
// on.
func htmlEscapes(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '<' || c == '>' || c == '&' {
			n += 5
		}
	}
	return n
}
