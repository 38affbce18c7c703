package tools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/fs"
	"github.com/switchboard-chat/switchboard/tools/memory"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// docWorld is the fs and memory tools on a real PostgreSQL document store.
type docWorld struct {
	tools map[string]tools.Tool
	root  string // the workspaces' root
}

func newDocWorld(t *testing.T, kinds map[string]string) *docWorld {
	t.Helper()
	db := pgtest.Open(t, context.Background())
	wsp := exec.Workspaces{Root: t.TempDir()}
	kind := func(agent string) string { return kinds[agent] }
	w := &docWorld{tools: map[string]tools.Tool{}}
	all := append(fs.NewTools(fs.Options{Workspaces: wsp, Docs: db, AgentKind: kind}),
		memory.NewTools(memory.Options{Docs: db, AgentKind: kind})...)
	for _, tool := range all {
		w.tools[tool.Name()] = tool
	}
	w.root = wsp.Root
	return w
}

// as runs tool as user in chat with agent.
func (w *docWorld) as(agent, user, chat, tool string, args any) tools.Result {
	raw, _ := json.Marshal(args)
	c := tools.Call{Channel: "telegram", ChatID: chat, UserID: user, Agent: agent, Session: agent + "/telegram:" + chat, ToolCallID: "c"}
	return w.tools[tool].Execute(tools.WithCall(context.Background(), c), raw)
}

// TestContextFilesAreRoutedToTheStore: context files live in the database,
// per agent for a predefined agent (USER.md per person), per person for an
// open agent with the agent's file as fallback; nothing reaches the disk;
// an empty write deletes.
func TestContextFilesAreRoutedToTheStore(t *testing.T) {
	w := newDocWorld(t, map[string]string{"ops": tools.KindPredefined, "pal": tools.KindOpen})
	ok := func(r tools.Result) {
		t.Helper()
		if r.IsError {
			t.Fatalf("unexpected error: %s", r.ForLLM)
		}
	}
	ok(w.as("ops", "telegram:1", "10", "write_file", map[string]any{"path": "SOUL.md", "content": "You are calm."}))
	// Another person of the same predefined agent sees the same SOUL.md…
	if r := w.as("ops", "telegram:2", "20", "read_file", map[string]any{"path": "./SOUL.md"}); r.ForLLM != "You are calm." {
		t.Errorf("predefined SOUL.md for another user = %+v", r)
	}
	// …but USER.md is per person.
	ok(w.as("ops", "telegram:1", "10", "write_file", map[string]any{"path": "USER.md", "content": "Likes tea."}))
	if r := w.as("ops", "telegram:2", "20", "read_file", map[string]any{"path": "USER.md"}); !r.IsError {
		t.Errorf("USER.md leaked to another person: %+v", r)
	}
	// Another agent does not see ops's files.
	if r := w.as("pal", "telegram:1", "10", "read_file", map[string]any{"path": "SOUL.md"}); !r.IsError {
		t.Errorf("another agent read ops's SOUL.md: %+v", r)
	}
	// Open agent: per person, the agent's own file as fallback.
	ok(w.as("pal", "telegram:1", "10", "write_file", map[string]any{"path": "IDENTITY.md", "content": "pal for user 1"}))
	if r := w.as("pal", "telegram:2", "20", "read_file", map[string]any{"path": "IDENTITY.md"}); !r.IsError {
		t.Errorf("an open agent's per-user file leaked: %+v", r)
	}
	ok(w.as("pal", "telegram:1", "10", "edit", map[string]any{"path": "IDENTITY.md", "old_text": "user 1", "new_text": "Ann"}))
	if r := w.as("pal", "telegram:1", "10", "read_file", map[string]any{"path": "IDENTITY.md"}); r.ForLLM != "pal for Ann" {
		t.Errorf("edited context file = %+v", r)
	}
	// BOOTSTRAP.md written empty is deleted.
	ok(w.as("ops", "telegram:1", "10", "write_file", map[string]any{"path": "BOOTSTRAP.md", "content": "first run"}))
	ok(w.as("ops", "telegram:1", "10", "write_file", map[string]any{"path": "BOOTSTRAP.md", "content": ""}))
	if r := w.as("ops", "telegram:1", "10", "read_file", map[string]any{"path": "BOOTSTRAP.md"}); !r.IsError {
		t.Errorf("empty BOOTSTRAP.md still there: %+v", r)
	}
	// Nothing went to the disk.
	_ = filepath.WalkDir(w.root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			t.Errorf("a context file reached the disk: %s", p)
		}
		return nil
	})
	// Other names are still files: notes.md goes to the workspace.
	if r := w.as("ops", "telegram:1", "10", "write_file", map[string]any{"path": "soul.md", "content": "x"}); r.IsError {
		t.Errorf("an ordinary file: %+v", r)
	}
	ws, err := exec.Workspaces{Root: w.root}.Dir("ops/telegram:10")
	toolstest.Must(t, err)
	if _, err := os.Stat(filepath.Join(ws, "soul.md")); err != nil {
		t.Errorf("an ordinary file did not reach the disk: %v", err)
	}
}

// TestContextPromptPicksEachFilesScope: the system prompt's context files
// come in ContextFiles order, each from the first scope that has it — the
// person's USER.md before the agent's, every file per person for an open
// agent — and a file that is there but blank hides the agent's and adds
// nothing.
func TestContextPromptPicksEachFilesScope(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	put := func(agent, scope, path, content string) {
		t.Helper()
		toolstest.Must(t, db.PutDoc(ctx, tools.DocKey{Agent: agent, Scope: scope, Path: path}, content))
	}
	put("ops", "", "USER.md", "Someone.")
	put("ops", "", "SOUL.md", "Calm.")
	put("ops", "", "AGENTS.md", "  \n ")
	put("ops", tools.UserScope("telegram:1"), "USER.md", "Likes tea.")
	put("ops", tools.UserScope("telegram:2"), "USER.md", " ")
	put("ops", tools.UserScope("telegram:1"), "SOUL.md", "Not read: SOUL.md is the agent's.")
	put("pal", "", "SOUL.md", "Kind.")
	put("pal", "", "IDENTITY.md", "pal")
	put("pal", tools.UserScope("telegram:1"), "IDENTITY.md", "pal for Ann")
	prompt := func(agent, kind, user string) string {
		t.Helper()
		c := tools.Call{Channel: "telegram", ChatID: "10", UserID: user, Agent: agent}
		text, err := tools.ContextPrompt(ctx, db, kind, c)
		toolstest.Must(t, err)
		return text
	}
	for _, tc := range []struct{ agent, kind, user, want string }{
		{"ops", tools.KindPredefined, "telegram:1", "## SOUL.md\nCalm.\n\n## USER.md\nLikes tea."},
		{"ops", tools.KindPredefined, "telegram:2", "## SOUL.md\nCalm."},
		{"ops", tools.KindPredefined, "telegram:3", "## SOUL.md\nCalm.\n\n## USER.md\nSomeone."},
		{"pal", tools.KindOpen, "telegram:1", "## SOUL.md\nKind.\n\n## IDENTITY.md\npal for Ann"},
		{"pal", tools.KindOpen, "telegram:3", "## SOUL.md\nKind.\n\n## IDENTITY.md\npal"},
		{"nobody", tools.KindOpen, "telegram:1", ""},
	} {
		if got := prompt(tc.agent, tc.kind, tc.user); got != tc.want {
			t.Errorf("%s (%s) for %s:\n got %q\nwant %q", tc.agent, tc.kind, tc.user, got, tc.want)
		}
	}
}

// TestMemorySearchFindsWhatWasWritten: memory documents written with
// write_file are found by memory_search (ranked), read by memory_get, and
// scoped per chat for a predefined agent.
func TestMemorySearchFindsWhatWasWritten(t *testing.T) {
	w := newDocWorld(t, map[string]string{"ops": tools.KindPredefined})
	for path, content := range map[string]string{
		"memory/db.md":      "The production database runs PostgreSQL 17 on host db-1; backups run nightly.",
		"memory/deploys.md": "Deploys happen on Tuesdays. The database is migrated first.",
		"MEMORY.md":         "Ann prefers short answers.",
	} {
		if r := w.as("ops", "telegram:1", "10", "write_file", map[string]any{"path": path, "content": content}); r.IsError {
			t.Fatal(r.ForLLM)
		}
	}
	r := w.as("ops", "telegram:1", "10", "memory_search", map[string]any{"query": "database backups"})
	if r.IsError || !strings.HasPrefix(r.ForLLM, "1. memory/db.md") || !strings.Contains(r.ForLLM, "**backups**") {
		t.Errorf("search = %+v; want memory/db.md first with the match highlighted", r)
	}
	if r := w.as("ops", "telegram:1", "10", "memory_search", map[string]any{"query": "database"}); !strings.Contains(r.ForLLM, "memory/deploys.md") {
		t.Errorf("search for a shared word misses a document: %s", r.ForLLM)
	}
	if r := w.as("ops", "telegram:1", "10", "memory_get", map[string]any{"path": "MEMORY.md"}); r.ForLLM != "Ann prefers short answers." {
		t.Errorf("memory_get = %+v", r)
	}
	if r := w.as("ops", "telegram:1", "10", "memory_get", map[string]any{"path": "notes.txt"}); !r.IsError {
		t.Errorf("memory_get of a non-memory path: %+v", r)
	}
	// Another chat of the same agent has its own memory.
	if r := w.as("ops", "telegram:2", "20", "memory_search", map[string]any{"query": "database"}); r.IsError || !strings.HasPrefix(r.ForLLM, "nothing in memory") {
		t.Errorf("memory leaked to another chat: %+v", r)
	}
}

// TestMemorySearchByMeaning: with an embeddings model, memory_search finds
// a document that shares no word with the query but means the same (the
// fake embeds "automobile" where "car" is), and keeps word hits.
func TestMemorySearchByMeaning(t *testing.T) {
	ctx := context.Background()
	db := pgtest.Open(t, ctx)
	llm := llmtest.NewServer()
	defer llm.Close()
	llm.Synonym("automobile", "car")
	llm.Synonym("parked", "where")
	emb := agentcore.NewEmbedder(agentcore.EmbedderOptions{BaseURL: llm.URL(), Model: "embed-test"})
	wsp := exec.Workspaces{Root: t.TempDir()}
	set := map[string]tools.Tool{}
	for _, tool := range append(fs.NewTools(fs.Options{Workspaces: wsp, Docs: db, Embedder: emb}),
		memory.NewTools(memory.Options{Docs: db, Embedder: emb})...) {
		set[tool.Name()] = tool
	}
	c := tools.Call{Channel: "telegram", ChatID: "5", UserID: "telegram:5", Agent: "ops", Session: "ops/telegram:5"}
	run := func(tool, args string) tools.Result {
		return set[tool].Execute(tools.WithCall(ctx, c), json.RawMessage(args))
	}
	for _, doc := range []string{
		`{"path":"memory/garage.md","content":"The automobile is parked in garage B, level 2."}`,
		`{"path":"memory/lunch.md","content":"Team lunch: pizza at noon on Fridays."}`,
	} {
		if r := run("write_file", doc); r.IsError || strings.Contains(r.ForLLM, "not indexed") {
			t.Fatalf("write: %+v", r)
		}
	}
	if n := llm.EmbeddingRequests(); n != 2 {
		t.Errorf("%d embedding requests for 2 memory documents", n)
	}
	r := run("memory_search", `{"query":"where is my car"}`)
	if r.IsError || !strings.HasPrefix(r.ForLLM, "1. memory/garage.md") || strings.Contains(r.ForLLM, "lunch") {
		t.Errorf("search by meaning = %+v", r)
	}
	// Without the embedder the same query finds nothing: the words differ.
	plain := memory.NewTools(memory.Options{Docs: db})[0]
	if r := plain.Execute(tools.WithCall(ctx, c), json.RawMessage(`{"query":"where is my car"}`)); !strings.HasPrefix(r.ForLLM, "nothing in memory") {
		t.Errorf("word search alone = %+v", r)
	}
	// Word hits still come first when they exist.
	if r := run("memory_search", `{"query":"lunch fridays"}`); !strings.HasPrefix(r.ForLLM, "1. memory/lunch.md") {
		t.Errorf("word search with the embedder = %+v", r)
	}
	// An unreachable embeddings model keeps writes working.
	llm.Close()
	if r := run("write_file", `{"path":"memory/x.md","content":"still saved"}`); r.IsError || !strings.Contains(r.ForLLM, "not indexed by meaning") {
		t.Errorf("write with the embedder down = %+v", r)
	}
}
