package agentcore

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

// lenCost counts a message's content bytes, for tests that reason in
// round numbers.
func lenCost(m Message) int { return len(m.Content) }

func turn(seq int64, role Role, content string) Message {
	return Message{Role: role, Content: content, Seq: seq}
}

// A window cut for the budget starts at a user message whose turn is
// whole: never at a tool result, never between a call and its result.
func TestBudgetStartKeepsToolStepsWhole(t *testing.T) {
	call := Message{Role: RoleAssistant, Seq: 3, ToolCalls: []ToolCall{{ID: "c1", Name: "exec"}}}
	msgs := []Message{
		turn(1, RoleUser, strings.Repeat("a", 40)), turn(2, RoleAssistant, strings.Repeat("b", 40)),
		turn(3, RoleUser, "run it"), call,
		{Role: RoleTool, ToolCallID: "c1", ToolName: "exec", Content: strings.Repeat("r", 100), Seq: 5},
		turn(6, RoleAssistant, "done"), turn(7, RoleUser, "thanks"),
	}
	msgs[3].Seq, msgs[2].Seq = 4, 3
	// 196 bytes; a budget of 20 keeps only the newest turn, not the result.
	start, cut := budgetStart(msgs, 20, lenCost)
	if !cut || msgs[start].Seq != 7 {
		t.Fatalf("start at seq %d (cut %v), want the newest turn at 7", msgs[start].Seq, cut)
	}
	// A budget that holds the tool turn keeps it whole, from its user message.
	start, _ = budgetStart(msgs, 160, lenCost)
	if msgs[start].Seq != 3 {
		t.Fatalf("start at seq %d, want 3 (the tool turn whole)", msgs[start].Seq)
	}
	if start, cut := budgetStart(msgs, 1000, lenCost); start != 0 || cut {
		t.Fatalf("a window within budget was cut at %d", start)
	}
}

// A user message written while a tool ran (stored between the call and
// its result, moved behind the result) and one after a call still
// waiting for its result are no place to start a window.
func TestTurnStartsSkipMovedMessagesAndOpenCalls(t *testing.T) {
	call := Message{Role: RoleAssistant, Seq: 2, ToolCalls: []ToolCall{{ID: "c1"}}}
	moved := orderToolResults([]Message{
		turn(1, RoleUser, "go"), call, turn(3, RoleUser, "meanwhile"),
		{Role: RoleTool, ToolCallID: "c1", Seq: 4}, turn(5, RoleAssistant, "ok"), turn(6, RoleUser, "next"),
	})
	if got := turnStarts(moved); len(got) != 2 || moved[got[1]].Seq != 6 {
		t.Fatalf("turn starts %v of %+v, want seqs 1 and 6", got, moved)
	}
	open := []Message{turn(1, RoleUser, "go"), call, turn(3, RoleUser, "while it waits")}
	if got := turnStarts(open); len(got) != 1 {
		t.Fatalf("turn starts %v, want only the first: a call waits for its result", got)
	}
}

// As messages arrive one by one, the window's start moves in steps of a
// quarter of the budget, not with every message, and always fits.
func TestBudgetStartMovesInSteps(t *testing.T) {
	var msgs []Message
	starts := map[int64]bool{}
	for s := int64(1); s <= 200; s++ {
		role := RoleUser
		if s%2 == 0 {
			role = RoleAssistant
		}
		msgs = append(msgs, turn(s, role, strings.Repeat("x", 10)))
		start, _ := budgetStart(msgs, 400, lenCost)
		sent := 0
		for _, m := range msgs[start:] {
			sent += lenCost(m)
		}
		if sent > 400 {
			t.Fatalf("after seq %d the window holds %d bytes, over the budget of 400", s, sent)
		}
		if s > 40 && sent < 400-100-20 {
			t.Fatalf("after seq %d the window holds only %d bytes", s, sent)
		}
		starts[msgs[start].Seq] = true
	}
	// 160 messages past the first full window, 10 a step: about 16 starts.
	if len(starts) > 20 {
		t.Fatalf("the window started at %d different messages; want it to move in steps", len(starts))
	}
}

// The estimate counts text at 4 bytes a token, tool call JSON, the system
// prompt and the tool schemas, and each picture at its provider's cost
// when the model is shown pictures; a notice costs nothing (never sent).
func TestTokenEstimate(t *testing.T) {
	c := costsFor(nil, false)
	if got := c.message(Message{Role: RoleUser, Content: strings.Repeat("a", 400)}); got != 104 {
		t.Errorf("400 bytes of text = %d tokens, want 100 + %d", got, messageOverhead)
	}
	call := Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "id", Name: "exec", Arguments: json.RawMessage(strings.Repeat("1", 80))}}}
	if got := c.message(call); got < 20+messageOverhead*2 {
		t.Errorf("a tool call with 80 bytes of arguments = %d tokens, want them counted", got)
	}
	if got := c.message(Notice("n", strings.Repeat("a", 400))); got != 0 {
		t.Errorf("a notice = %d tokens, want 0", got)
	}
	img := Message{Role: RoleUser, Content: "see", Images: []Image{{SHA256: "x"}, {SHA256: "y"}}}
	if got := c.message(img); got != messageOverhead+1 {
		t.Errorf("pictures counted for a model without vision: %d", got)
	}
	if got := costsFor(anthropicName{}, true).message(img); got != messageOverhead+1+2*anthropicImageTokens {
		t.Errorf("two pictures to Anthropic = %d tokens", got)
	}
	if got := costsFor(nil, true).message(img); got != messageOverhead+1+2*openAIImageTokens {
		t.Errorf("two pictures to OpenAI = %d tokens", got)
	}
	specs := []tools.Spec{{Name: "exec", Description: strings.Repeat("d", 400), Parameters: json.RawMessage(`{"type":"object"}`)}}
	if base, with := c.fixed(strings.Repeat("s", 400), nil), c.fixed(strings.Repeat("s", 400), specs); base != 104 || with < base+100 {
		t.Errorf("fixed cost: system alone %d (want 104), with a tool %d (want 100 more)", base, with)
	}
}

type anthropicName struct{ Provider }

func (anthropicName) Name() string { return "anthropic" }

// What is summarized is whole turns, the oldest first, within the bound.
func TestChunkToSummarizeTakesWholeTurns(t *testing.T) {
	call := Message{Role: RoleAssistant, Seq: 2, ToolCalls: []ToolCall{{ID: "c1", Name: "exec"}}}
	msgs := []Message{
		turn(1, RoleUser, "go"), call, {Role: RoleTool, ToolCallID: "c1", ToolName: "exec", Content: strings.Repeat("r", 400), Seq: 3},
		turn(4, RoleAssistant, "done"), turn(5, RoleUser, "more"), turn(6, RoleAssistant, "sure"),
	}
	if got := chunkToSummarize(msgs, 10000, true); len(got) != 6 {
		t.Fatalf("everything fits: got %d messages, want 6", len(got))
	}
	// The first turn alone is over the bound: it goes whole, the next waits.
	if got := chunkToSummarize(msgs, 20, true); lastSeq(got) != 4 {
		t.Fatalf("chunk ends at seq %d, want 4 (the first turn whole)", lastSeq(got))
	}
	// Cut by the message limit mid-turn: only what ends a turn goes.
	if got := chunkToSummarize(msgs[:5], 10000, false); lastSeq(got) != 4 {
		t.Fatalf("chunk of a cut range ends at %d, want 4", lastSeq(got))
	}
	if got := chunkToSummarize(msgs[:3], 10000, false); len(got) != 0 {
		t.Fatalf("one unfinished turn was summarized: %+v", got)
	}
}

// The model's summary is stored clean and bounded; no text is an error.
func TestCleanSummary(t *testing.T) {
	if _, err := cleanSummary("  \n ", summaryMaxTokens); err == nil {
		t.Error("an empty summary was accepted")
	}
	got, err := cleanSummary("a\x00b\xff", summaryMaxTokens)
	if err != nil || got != "ab\uFFFD" {
		t.Errorf("cleanSummary = %q, %v", got, err)
	}
	long, _ := cleanSummary(strings.Repeat("é", summaryMaxTokens*bytesPerToken), summaryMaxTokens)
	if len(long) > summaryMaxTokens*bytesPerToken+len("…") || !strings.HasSuffix(long, "…") {
		t.Errorf("a long summary kept %d bytes", len(long))
	}
}
