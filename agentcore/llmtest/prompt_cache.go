package llmtest

import (
	"encoding/json"
	"strings"
)

// prompt is what a chat request's prompt cache lookup compares: the model,
// the tools as sent and each message as sent, with its tokens.
type prompt struct {
	model    string
	tools    string
	messages []string
	tokens   []int // of each message, counted as usageFor counts them
}

// promptOf reads the prompt of a decoded request from its raw body.
func promptOf(req Request) prompt {
	var raw struct {
		Tools    json.RawMessage   `json:"tools"`
		Messages []json.RawMessage `json:"messages"`
	}
	_ = json.Unmarshal(req.Body, &raw) // decodeRequest read it already
	p := prompt{model: req.Model, tools: string(raw.Tools)}
	for i, m := range raw.Messages {
		p.messages = append(p.messages, string(m))
		p.tokens = append(p.tokens, messageTokens(req.Messages[i]))
	}
	return p
}

// messageTokens counts a message's words as tokens, plus one.
func messageTokens(m Message) int { return len(strings.Fields(m.Content)) + 1 }

// cachedTokens is the server's prompt cache rule, a simple stand-in for
// OpenAI's: a request's cached tokens are the tokens of its longest run of
// leading messages that an earlier answered request to the same model, with
// the same tools, sent byte for byte. There is no minimum length, and only
// whole messages count.
func cachedTokens(p prompt, earlier []prompt) int {
	best := 0
	for _, e := range earlier {
		if e.model != p.model || e.tools != p.tools {
			continue
		}
		n, sum := 0, 0
		for n < len(p.messages) && n < len(e.messages) && p.messages[n] == e.messages[n] {
			sum += p.tokens[n]
			n++
		}
		best = max(best, sum)
	}
	return best
}

// remember makes an answered request's prompt one that later requests
// find cached.
func (s *Server) remember(p prompt) {
	s.mu.Lock()
	s.prompts = append(s.prompts, p)
	s.mu.Unlock()
}
