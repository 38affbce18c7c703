package skills

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// PublishTool is publish_skill: a workspace folder becomes a published
// skill once the approvers press Publish. It asks them itself, always
// (tools.SelfApproving), whatever tools.approvals says of its class.
type PublishTool struct{ o ToolOptions }

var _ tools.SelfApproving = (*PublishTool)(nil)

// ApprovesItself implements tools.SelfApproving.
func (*PublishTool) ApprovesItself() {}

// Name implements tools.Tool.
func (*PublishTool) Name() string { return "publish_skill" }

// Description implements tools.Tool.
func (*PublishTool) Description() string {
	return "Publish a workspace folder as a skill every allowed agent can find and use. The folder needs a SKILL.md " +
		"starting with YAML front matter (name: lower-case-with-hyphens, description: what it does and when to use it) " +
		fmt.Sprintf("followed by the instructions; at most %d files, %d KiB each, %d KiB in all, no symlinks. ", MaxFiles, MaxFileBytes>>10, MaxTotalBytes>>10) +
		"The approvers see exactly what is published and press Publish or Reject; publishing the same name again makes a new version."
}

// Parameters implements tools.Tool.
func (*PublishTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","description":"the folder, relative to the workspace"}},` +
		`"required":["path"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool.
func (*PublishTool) SideEffect() tools.SideEffect { return tools.SideEffectMutating }

// Execute implements tools.Tool: the folder is snapshotted first (once per
// call), then the approvers are asked about the snapshot; the call made
// again after their decision publishes or rejects that snapshot.
func (t *PublishTool) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Path string `json:"path"`
	}
	if err := decodeArgs(raw, &a, `{"path": "folder/with/SKILL.md"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	call, _ := tools.CallFrom(ctx)
	if call.Session == "" || call.ToolCallID == "" {
		return tools.ErrorResult("publish_skill works only inside a conversation")
	}
	snap, res, ok := t.snapshot(ctx, call, a.Path)
	if !ok {
		return res
	}
	switch snap.Status {
	case StatusPublished:
		return tools.Result{ForLLM: publishedText(snap)}
	case StatusRejected:
		return tools.ErrorResult(fmt.Sprintf("skill %s was not published (rejected). Ask what to change before you try again.", snap.Skill.Name))
	}
	findings := scriptFindings(snap.Skill)
	req := tools.ApprovalRequest{
		Tool: t.Name(), Command: summary(snap.Skill, findings), Call: call, Verb: tools.VerbPublish,
		Class: t.SideEffect().String(), Groups: tools.GroupsOf(t), Warnings: scriptWarnings(findings),
	}
	res, ok = tools.AskApproval(ctx, t.o.Logger.With("tool", t.Name()), t.o.Approver, req, "skill")
	if !ok && (res.Waiting != nil || ctx.Err() != nil) {
		// Still waiting, or cut off by a shutdown: the snapshot stays
		// pending for the call made again when the run resumes.
		return res
	}
	if !ok {
		why := strings.NewReplacer("denied", "rejected", "did not run", "was not published").Replace(res.ForLLM)
		if _, err := t.o.Store.RejectSkill(ctx, snap.ID, call.UserID, why); err != nil {
			t.o.Logger.Error("mark skill rejected", "skill", snap.Skill.Name, "snapshot", snap.ID, "err", err)
		}
		return tools.ErrorResult(fmt.Sprintf("skill %s was not published: %s", snap.Skill.Name, why))
	}
	wctx, cancel := durable(ctx)
	defer cancel()
	published, err := t.o.Store.PublishSkill(wctx, snap.ID, call.UserID)
	if err != nil {
		t.o.Logger.Error("publish skill", "skill", snap.Skill.Name, "snapshot", snap.ID, "err", err)
		return tools.ErrorResult("the approvers said Publish, but it could not be stored right now (storage unavailable); call publish_skill again in a moment")
	}
	t.o.Logger.Info("skill published", "skill", published.Skill.Name, "version", published.Version, "agent", call.Agent, "session", call.Session)
	return tools.Result{ForLLM: publishedText(published)}
}

// snapshot returns the call's snapshot: the one it made before (the call
// is made again after the approvers decide), else the folder at p read
// and stored now. When ok is false, res is the error for the model.
func (t *PublishTool) snapshot(ctx context.Context, call tools.Call, p string) (Snapshot, tools.Result, bool) {
	snap, found, err := t.o.Store.FindSnapshot(ctx, call.Session, call.ToolCallID)
	if err != nil {
		t.o.Logger.Error("find skill snapshot", "session", call.Session, "err", err)
		return snap, tools.ErrorResult("could not publish right now (storage unavailable); try again in a moment"), false
	}
	if found {
		return snap, tools.Result{}, true
	}
	s, err := t.readFolder(call, p)
	if err != nil {
		return snap, tools.ErrorResult(fmt.Sprintf("cannot publish %s: %v", clip(p, 200), err)), false
	}
	if d, clash := t.o.Catalog.Dirs().Get(s.Name); clash {
		t.o.Logger.Info("publish refused: a directory skill has the name", "skill", s.Name, "folder", d.Folder)
		return snap, tools.ErrorResult(fmt.Sprintf("a skill in skills.dirs is called %s; pick another name (change name: in SKILL.md)", s.Name)), false
	}
	wctx, cancel := durable(ctx)
	defer cancel()
	snap, _, err = t.o.Store.SnapshotSkill(wctx, Snapshot{Skill: s, Session: call.Session, ToolCallID: call.ToolCallID, Agent: call.Agent, Requester: call.UserID})
	if err != nil {
		t.o.Logger.Error("snapshot skill", "skill", s.Name, "err", err)
		return snap, tools.ErrorResult("could not publish right now (storage unavailable); try again in a moment"), false
	}
	return snap, tools.Result{}, true
}

// readFolder reads the skill in folder p of the call's workspace,
// opened through the workspace's os.Root so no path or symlink leads out.
func (t *PublishTool) readFolder(call tools.Call, p string) (Skill, error) {
	if strings.TrimSpace(p) == "" {
		return Skill{}, errors.New(`"path" is empty; pass the folder that holds SKILL.md, relative to the workspace`)
	}
	ws, err := t.o.Workspace(call)
	if err != nil {
		return Skill{}, err
	}
	rel := filepath.Clean(p)
	if filepath.IsAbs(rel) {
		if rel, err = filepath.Rel(ws, rel); err != nil {
			return Skill{}, errors.New("it is outside the workspace; use a path relative to it")
		}
	}
	if rel == ".." || strings.HasPrefix(rel, "../") {
		return Skill{}, errors.New("it is outside the workspace; use a path relative to it")
	}
	wsRoot, err := os.OpenRoot(ws)
	if err != nil {
		return Skill{}, fmt.Errorf("open the workspace: %w", unwrapPath(err))
	}
	defer wsRoot.Close()
	root, err := wsRoot.OpenRoot(rel)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return Skill{}, errors.New("no such folder in the workspace (list_files shows what is there)")
	case err != nil:
		return Skill{}, fmt.Errorf("cannot open the folder: %w", unwrapPath(err))
	}
	defer root.Close()
	return ReadRoot(root)
}

// summary is what the approvers are shown of s: name, description,
// every file with its size, and the script lines the shell guard blocks
// or flags. It is shown as a code block, so nothing in a skill renders as
// markup on the card; and it depends only on the snapshot, so the call
// made again after the decision asks about exactly the same text.
func summary(s Skill, findings []finding) string {
	var b strings.Builder
	fmt.Fprintf(&b, "skill: %s\ndescription: %s\nfiles (%d, %s):", s.Name, s.Description, len(s.Files), size(s.Size()))
	for _, f := range s.Files {
		fmt.Fprintf(&b, "\n  %s  %s", f.Path, size(len(f.Data)))
	}
	head := false
	for _, f := range findings {
		if f.line == "" {
			continue
		}
		if !head {
			b.WriteString("\nscript lines the shell guard blocks or flags:")
			head = true
		}
		b.WriteString("\n  " + f.line)
	}
	return b.String()
}

// publishedText tells the model the skill is published.
func publishedText(s Snapshot) string {
	return fmt.Sprintf("Published skill %s as version %d. Agents allowed to see it find it with skill_search and use it with use_skill; "+
		"from their next message it is listed in their instructions.", s.Skill.Name, s.Version)
}

// writeTimeout bounds a durable write of publish_skill.
const writeTimeout = 15 * time.Second

// durable is the context of a write that must not be cut off half-way by
// a shutdown: ctx's values without its cancellation, bounded by
// writeTimeout. A publication the approvers allowed is stored even when
// the daemon is stopping meanwhile.
func durable(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), writeTimeout)
}
