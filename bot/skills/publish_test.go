package skills_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/switchboard-chat/switchboard/bot/skills"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// scriptedApprover answers each request by its tool call id: pending
// until decide sets a decision.
type scriptedApprover struct {
	mu       sync.Mutex
	asked    map[string]tools.ApprovalRequest
	decision map[string]tools.Decision
}

// AlwaysAllowed implements tools.Approver.
func (*scriptedApprover) AlwaysAllowed(context.Context, string, string) (bool, error) {
	return true, nil // a publication must never be let through by this
}

// Approve implements tools.Approver.
func (a *scriptedApprover) Approve(_ context.Context, req tools.ApprovalRequest) (tools.Decision, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked[req.Call.ToolCallID] = req
	if d, ok := a.decision[req.Call.ToolCallID]; ok {
		return d, nil
	}
	return tools.Denied, &tools.PendingError{}
}

// publishWorld is a workspace, a skills dir and the tools on a real store.
type publishWorld struct {
	ws       string
	tools    map[string]tools.Tool
	approver *scriptedApprover
}

func newPublishWorld(t *testing.T, dirSkills map[string]string) *publishWorld {
	t.Helper()
	db := pgtest.Open(t, context.Background())
	w := &publishWorld{ws: t.TempDir(), tools: map[string]tools.Tool{},
		approver: &scriptedApprover{asked: map[string]tools.ApprovalRequest{}, decision: map[string]tools.Decision{}}}
	dir := t.TempDir()
	for p, c := range dirSkills {
		write(t, filepath.Join(dir, p), c)
	}
	cat := skills.NewCatalog(skills.CatalogOptions{Dirs: skills.NewDirs([]string{dir}, nil), Store: db})
	for _, tool := range skills.NewTools(skills.ToolOptions{Catalog: cat, Store: db, Approver: w.approver,
		Workspace: func(tools.Call) (string, error) { return w.ws, nil }}) {
		w.tools[tool.Name()] = tool
	}
	return w
}

// call runs tool with args as call id in one session.
func (w *publishWorld) call(id, tool string, args any) tools.Result {
	raw, _ := json.Marshal(args)
	ctx := tools.WithCall(context.Background(), tools.Call{Channel: "telegram", ChatID: "7", UserID: "telegram:7",
		Session: "ops/telegram:7", Agent: "ops", ToolCallID: id})
	return w.tools[tool].Execute(ctx, raw)
}

func write(t *testing.T, p, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestPublishSnapshotsFirstAndPublishesWhatWasShown: the first call parks
// with a Publish/Reject request about the snapshot; the call made again
// after Publish publishes that snapshot, not the folder as it is now; a
// third execution asks nobody and says it is published.
func TestPublishSnapshotsFirstAndPublishesWhatWasShown(t *testing.T) {
	w := newPublishWorld(t, nil)
	write(t, filepath.Join(w.ws, "s", "SKILL.md"), "---\nname: deploy\ndescription: Deploys\n---\nOriginal body.\n")
	write(t, filepath.Join(w.ws, "s", "run.sh"), "rm -rf /\n")
	res := w.call("c1", "publish_skill", map[string]any{"path": "s"})
	if res.Waiting == nil {
		t.Fatalf("first call = %+v; want it parked", res)
	}
	req := w.approver.asked["c1"]
	if req.Verb != tools.VerbPublish || req.Tool != "publish_skill" || len(req.Warnings) == 0 ||
		!strings.Contains(req.Command, "run.sh  9 B") || !strings.Contains(req.Command, "run.sh:1: rm -rf /") {
		t.Fatalf("request = %+v", req)
	}
	write(t, filepath.Join(w.ws, "s", "SKILL.md"), "---\nname: deploy\ndescription: Changed\n---\nChanged body.\n")
	w.approver.decision["c1"] = tools.AllowedOnce
	res = w.call("c1", "publish_skill", map[string]any{"path": "s"})
	if res.IsError || !strings.Contains(res.ForLLM, "Published skill deploy as version 1") {
		t.Fatalf("call after Publish = %+v", res)
	}
	if again := w.approver.asked["c1"]; again.Command != req.Command {
		t.Fatalf("the call made again asked about %q, not what was shown first", again.Command)
	}
	delete(w.approver.asked, "c1")
	if res := w.call("c1", "publish_skill", map[string]any{"path": "s"}); !strings.Contains(res.ForLLM, "version 1") {
		t.Fatalf("third execution = %+v", res)
	}
	if _, asked := w.approver.asked["c1"]; asked {
		t.Fatal("a published snapshot asked the approvers again")
	}
	used := w.call("c9", "use_skill", map[string]any{"name": "deploy"})
	if !strings.Contains(used.ForLLM, "Original body.") {
		t.Fatalf("use_skill of the published skill = %+v; want the body the approvers saw", used)
	}
	// Publishing the name again is version 2.
	w.approver.decision["c2"] = tools.AllowedOnce
	if res := w.call("c2", "publish_skill", map[string]any{"path": "s"}); !strings.Contains(res.ForLLM, "version 2") {
		t.Fatalf("second publication = %+v", res)
	}
}

// TestPublishRefusals: a denied or expired request is rejected and the
// model told; bad folders, paths out of the workspace and a directory
// skill's name are refused before anyone is asked.
func TestPublishRefusals(t *testing.T) {
	w := newPublishWorld(t, map[string]string{"notes/SKILL.md": "---\nname: notes\ndescription: Dir skill\n---\n"})
	write(t, filepath.Join(w.ws, "s", "SKILL.md"), "---\nname: deploy\ndescription: Deploys\n---\n")
	for id, d := range map[string]tools.Decision{"denied": tools.Denied, "expired": tools.Expired} {
		w.approver.decision[id] = d
		res := w.call(id, "publish_skill", map[string]any{"path": "s"})
		if !res.IsError || !strings.Contains(res.ForLLM, "skill deploy was not published") {
			t.Fatalf("%s = %+v", id, res)
		}
		if res := w.call(id, "publish_skill", map[string]any{"path": "s"}); !strings.Contains(res.ForLLM, "rejected") {
			t.Fatalf("%s made again = %+v; want it still rejected", id, res)
		}
	}
	if found := w.call("q", "skill_search", map[string]any{"query": "deploys"}); strings.Contains(found.ForLLM, "deploy (") {
		t.Fatalf("a rejected skill was found: %q", found.ForLLM)
	}
	outside := t.TempDir()
	write(t, filepath.Join(outside, "SKILL.md"), "---\nname: sneaky\ndescription: Outside\n---\n")
	if err := os.Symlink(outside, filepath.Join(w.ws, "link")); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(w.ws, "clash", "SKILL.md"), "---\nname: notes\ndescription: Mine\n---\n")
	write(t, filepath.Join(w.ws, "bad", "SKILL.md"), "no front matter")
	for _, tc := range []struct{ path, want string }{
		{"clash", "a skill in skills.dirs is called notes; pick another name"},
		{"bad", "must start with YAML front matter"},
		{"missing", "no such folder"},
		{"../..", "outside the workspace"},
		{"/etc", "outside the workspace"},
		{"link", "cannot open the folder"},
		{"", `"path" is empty`},
	} {
		res := w.call("r-"+tc.path, "publish_skill", map[string]any{"path": tc.path})
		if !res.IsError || !strings.Contains(res.ForLLM, tc.want) {
			t.Errorf("publish %q = %+v; want %q", tc.path, res, tc.want)
		}
		if _, asked := w.approver.asked["r-"+tc.path]; asked {
			t.Errorf("publish %q asked the approvers", tc.path)
		}
	}
	if res := w.call("x", "publish_skill", json.RawMessage(`{"path": 3}`)); !res.IsError || !strings.Contains(res.ForLLM, "not valid") {
		t.Errorf("broken arguments = %+v", res)
	}
}
