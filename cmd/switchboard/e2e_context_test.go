package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// contextTokensE2E is the budget the e2e tests set: small, so a chat of
// a few dozen messages outgrows it beside the tool schemas (about 4 700).
const contextTokensE2E = 8000

// tag finds the message tags ("m007") the e2e chats write.
var tag = regexp.MustCompile(`m\d{3}`)

// isSummaryRequest reports whether req is a compaction's summary call.
func isSummaryRequest(req llmtest.Request) bool {
	return len(req.Messages) > 0 && req.Messages[0].Role == "system" && strings.HasPrefix(req.Messages[0].Content, "You summarize")
}

// summaryBrain answers summary calls with the tags they retell and every
// other call with Echo.
func summaryBrain(req llmtest.Request) llmtest.Reply {
	if !isSummaryRequest(req) {
		return llmtest.Echo(req)
	}
	tags := tag.FindAllString(req.Messages[len(req.Messages)-1].Content, -1)
	return llmtest.Reply{Text: "SUMMARY " + strings.Join(uniq(tags), " ")}
}

func uniq(ss []string) []string {
	seen, out := map[string]bool{}, []string(nil)
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// requestTokens estimates req as the daemon does (docs/architecture.md):
// 4 bytes a token and 4 a message, the tool schemas counted from the
// request body.
func requestTokens(t *testing.T, req llmtest.Request) int {
	t.Helper()
	n := 0
	for _, m := range req.Messages {
		n += 4 + (len(m.Content)+3)/4
		for _, c := range m.ToolCalls {
			n += 4 + (len(c.Name)+len(c.Arguments)+len(c.ID)+3)/4
		}
	}
	var body struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(req.Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, tool := range body.Tools {
		n += 4 + (len(tool)+3)/4
	}
	return n
}

// TestE2EContextTokensAndCompaction: a long private chat with a small
// agent.context_tokens. Every request the model receives fits the
// budget (system prompt and tools counted); once the chat outgrows it the
// old turns are summarized and the summary is sent in their place, never
// both; and after a restart the stored summary is still what stands for
// them.
func TestE2EContextTokensAndCompaction(t *testing.T) {
	ctx := testCtx(t, 4*time.Minute)
	e := startTelegramE2E(ctx, t, func(env map[string]string) {
		env["SWITCHBOARD_RATELIMIT_USER"] = "off"
		env["SWITCHBOARD_RATELIMIT_CHAT"] = "off"
		env["SWITCHBOARD_AGENT_CONTEXT_TOKENS"] = fmt.Sprint(contextTokensE2E)
		env["SWITCHBOARD_AGENT_HISTORY_LIMIT"] = "1000"
	})
	e.llm.Handle(summaryBrain)
	const chat = 7301
	pad := strings.Repeat("lorem ipsum ", 25)
	say := func(i int) {
		t.Helper()
		after := lastID(e.tg, chat)
		text := fmt.Sprintf("m%03d %s", i, pad)
		e.tg.PushMessage(telegramtest.Incoming{ChatID: chat, ChatType: "private", UserID: chat, UserName: "U", Text: text})
		newReplyContaining(ctx, t, e.tg, chat, after, fmt.Sprintf("echo: m%03d", i))
	}
	say(1)
	for i := 2; i <= 40; i++ {
		say(i)
	}
	checkRequests := func() (summarized []llmtest.Request) {
		t.Helper()
		for _, req := range e.llm.Requests() {
			if isSummaryRequest(req) {
				continue
			}
			if n := requestTokens(t, req); n > contextTokensE2E {
				t.Fatalf("the model received %d tokens, over agent.context_tokens %d", n, contextTokensE2E)
			}
			if len(req.Messages) > 1 && strings.HasPrefix(req.Messages[1].Content, "Summary of the earlier conversation") {
				summarized = append(summarized, req)
			}
		}
		return summarized
	}
	summarized := checkRequests()
	if len(summarized) == 0 {
		t.Fatal("no request was sent a summary of the turns that no longer fit")
	}
	last := summarized[len(summarized)-1]
	covered := tag.FindAllString(last.Messages[1].Content, -1)
	if len(covered) == 0 || covered[0] != "m001" {
		t.Fatalf("the summary does not retell the first turns: %q", last.Messages[1].Content)
	}
	for _, m := range last.Messages[2:] {
		for _, c := range covered {
			if m.Role == "user" && strings.HasPrefix(m.Content, c+" ") {
				t.Fatalf("turn %s was sent both in the summary and as itself", c)
			}
		}
	}
	if sawText(last, "m001 lorem") {
		t.Fatal("the first turn was sent beside its summary")
	}

	// After a restart the stored summary still stands for the old turns.
	e.d.stop()
	before := len(e.llm.Requests())
	e.restart(ctx, t)
	say(41)
	var req llmtest.Request
	for _, r := range e.llm.Requests()[before:] {
		if !isSummaryRequest(r) {
			req = r
		}
	}
	if len(req.Messages) < 2 || !strings.HasPrefix(req.Messages[1].Content, "Summary of the earlier conversation") ||
		!strings.Contains(req.Messages[1].Content, "SUMMARY m001") {
		t.Fatalf("after the restart the model was not sent the stored summary: %+v", req.Messages[:min(2, len(req.Messages))])
	}
	if sawText(req, "m001 lorem") {
		t.Fatal("after the restart the first turn was sent beside its summary")
	}
	checkRequests()
}
