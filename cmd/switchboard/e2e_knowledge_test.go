package main

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
)

// extractedFacts is the fake extraction model's answer.
const extractedFacts = `{"entities": [{"name": "Alice", "type": "person"}, {"name": "Acme", "type": "organization"},
	{"name": "Berlin", "type": "city"}],
	"relations": [{"from": "Alice", "to": "Acme", "type": "works_at"}, {"from": "Acme", "to": "Berlin", "type": "located_in"}]}`

// toolResultOf returns the content of the newest tool message the model
// received for tool.
func toolResultOf(t *testing.T, llm *llmtest.Server, tool string) string {
	t.Helper()
	reqs := llm.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		names := map[string]string{}
		for _, m := range reqs[i].Messages {
			for _, c := range m.ToolCalls {
				names[c.ID] = c.Name
			}
		}
		for j := len(reqs[i].Messages) - 1; j >= 0; j-- {
			if m := reqs[i].Messages[j]; m.Role == "tool" && names[m.ToolCallID] == tool {
				return m.Content
			}
		}
	}
	t.Fatalf("the model never received a %s result", tool)
	return ""
}

// TestE2EKnowledgeGraph: a memory document the agent writes in a chat is
// extracted in the background by knowledge.model, metered for that chat;
// knowledge_graph_search in the chat then gives the model the entities and
// relations two steps out with their source document; another chat finds
// none of them.
func TestE2EKnowledgeGraph(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		if strings.Contains(systemOf(r), "extract a knowledge graph") {
			return llmtest.Reply{Text: extractedFacts}
		}
		return llmtest.Echo(r)
	})
	dir := t.TempDir()
	writeConfig(t, dir, "tools:\n  approvals: {mutating: allow}\n")
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_KNOWLEDGE_EXTRACT"] = "true"
	env["SWITCHBOARD_KNOWLEDGE_MODEL"] = "extract-model"
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	const chat, other = 1201, 1202
	tg.SendText(chat, chat, "Ann", `CALL_TOOL:write_file {"path":"memory/people.md","content":"Alice works at Acme, which is in Berlin."}`)
	newReplyContaining(ctx, t, tg, chat, 0, "tool write_file said:")

	db, err := pgx.Connect(ctx, env["SWITCHBOARD_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	for {
		var relations int
		if err := db.QueryRow(ctx, `SELECT count(*) FROM knowledge_relations WHERE scope = 'chat:telegram:1201'`).Scan(&relations); err != nil {
			t.Fatal(err)
		}
		if relations == 2 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the graph was never built (%d relations)", relations)
		case <-time.After(50 * time.Millisecond):
		}
	}
	var extraction llmtest.Request
	for _, r := range llm.Requests() {
		if strings.Contains(systemOf(r), "extract a knowledge graph") {
			extraction = r
		}
	}
	if extraction.Model != "extract-model" || !sawText(extraction, "Alice works at Acme, which is in Berlin.") {
		t.Errorf("the extraction request = model %q, messages %+v", extraction.Model, extraction.Messages)
	}
	var metered int
	if err := db.QueryRow(ctx, `SELECT count(*) FROM llm_usage WHERE model = 'extract-model' AND chat = 'telegram:1201'`).Scan(&metered); err != nil || metered != 1 {
		t.Errorf("extraction usage records for the chat: %d, %v; want 1", metered, err)
	}

	after := lastID(tg, chat)
	tg.SendText(chat, chat, "Ann", `CALL_TOOL:knowledge_graph_search {"query":"alice","depth":2}`)
	newReplyContaining(ctx, t, tg, chat, after, "tool knowledge_graph_search said:")
	got := toolResultOf(t, llm, "knowledge_graph_search")
	for _, want := range []string{"Alice (person) — matches", "Acme (organization) — 1 away", "Berlin (city) — 2 away",
		"Alice —works_at→ Acme (source: memory/people.md)", "Acme —located_in→ Berlin (source: memory/people.md)"} {
		if !strings.Contains(got, want) {
			t.Errorf("the model's knowledge_graph_search result lacks %q:\n%s", want, got)
		}
	}

	tg.SendText(other, other, "Bo", `CALL_TOOL:knowledge_graph_search {"query":"alice","depth":3}`)
	newReplyContaining(ctx, t, tg, other, 0, "tool knowledge_graph_search said:")
	if got := toolResultOf(t, llm, "knowledge_graph_search"); !strings.Contains(got, "no entity") || strings.Contains(got, "Acme") {
		t.Errorf("another chat's search = %q; want nothing of the first chat's graph", got)
	}
}

// TestE2EKnowledgeExtractionSurvivesRestart: a daemon stopped while its
// extraction call is in flight hands the job back; the restarted daemon
// extracts the document without it being written again.
func TestE2EKnowledgeExtractionSurvivesRestart(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tg, llm := fakes(t)
	slow := true
	var mu sync.Mutex
	llm.Handle(func(r llmtest.Request) llmtest.Reply {
		if !strings.Contains(systemOf(r), "extract a knowledge graph") {
			return llmtest.Echo(r)
		}
		mu.Lock()
		defer mu.Unlock()
		if slow {
			return llmtest.Reply{Text: extractedFacts, Delay: time.Minute} // cut short when the daemon goes
		}
		return llmtest.Reply{Text: extractedFacts}
	})
	dir := t.TempDir()
	writeConfig(t, dir, "tools:\n  approvals: {mutating: allow}\n")
	addr := freeAddr(t)
	env := externalEnv(t, tg, llm, addr)
	env["SWITCHBOARD_KNOWLEDGE_EXTRACT"] = "true"
	d := startDaemon(t, dir, addr, env)
	d.waitReady(ctx)

	tg.SendText(1301, 1301, "Ann", `CALL_TOOL:write_file {"path":"MEMORY.md","content":"Alice works at Acme."}`)
	newReplyContaining(ctx, t, tg, 1301, 0, "tool write_file said:")
	extractions := func() int {
		n := 0
		for _, r := range llm.Requests() {
			if strings.Contains(systemOf(r), "extract a knowledge graph") {
				n++
			}
		}
		return n
	}
	for extractions() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the document was never sent for extraction")
		case <-time.After(20 * time.Millisecond):
		}
	}
	d.stop()
	if !strings.Contains(d.out.String(), "shutting down") {
		t.Fatalf("the daemon did not shut down in order:\n%s", d.out.String())
	}
	mu.Lock()
	slow = false
	mu.Unlock()

	db, err := pgx.Connect(ctx, env["SWITCHBOARD_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close(context.Background())
	var entities, attempts int
	if err := db.QueryRow(ctx, `SELECT (SELECT count(*) FROM knowledge_entities), (SELECT coalesce(max(attempts), -1) FROM knowledge_jobs)`).Scan(&entities, &attempts); err != nil {
		t.Fatal(err)
	}
	if entities != 0 || attempts != 0 {
		t.Fatalf("after the stop: %d entities, queued job's attempts %d; want the job handed back uncounted", entities, attempts)
	}
	d = startDaemon(t, dir, addr, env)
	d.waitReady(ctx)
	for {
		if err := db.QueryRow(ctx, `SELECT count(*) FROM knowledge_entities WHERE scope = 'chat:telegram:1301' AND path = 'MEMORY.md'`).Scan(&entities); err != nil {
			t.Fatal(err)
		}
		if entities == 3 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the restarted daemon never extracted the document (%d entities)", entities)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if n := extractions(); n != 2 {
		t.Errorf("%d extraction calls; want the interrupted one and one after the restart", n)
	}
}
