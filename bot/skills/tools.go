package skills

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"

	"github.com/switchboard-chat/switchboard/config"
	"github.com/switchboard-chat/switchboard/tools"
	toolfs "github.com/switchboard-chat/switchboard/tools/fs"
)

// Tool limits.
const (
	// MaxBodyShown bounds the SKILL.md body a use_skill result carries;
	// the rest is in the file it put in the workspace.
	MaxBodyShown = 32 << 10
	defaultHits  = 5
	maxHits      = 20
	maxQueryLen  = 500
)

// ToolOptions configures the skills' tools.
type ToolOptions struct {
	Catalog *Catalog
	Store   Store
	// Workspace returns the workspace of a call (the fs tools' and exec's),
	// where use_skill puts files and publish_skill reads folders.
	Workspace func(tools.Call) (string, error)
	// Approver asks the approvers whether a skill may be published.
	Approver tools.Approver
	Logger   *slog.Logger
}

// NewTools returns skill_search, use_skill and publish_skill.
func NewTools(o ToolOptions) []tools.Tool {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return []tools.Tool{&SearchTool{o}, &UseTool{o}, &PublishTool{o}}
}

// decodeArgs reads raw into v, refusing unknown fields; the error shows
// the expected shape.
func decodeArgs(raw json.RawMessage, v any, shape string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("the arguments are not valid (%v); pass %s", err, shape)
	}
	return nil
}

// SearchTool is skill_search: rank the skills the agent may use by words.
type SearchTool struct{ o ToolOptions }

// Name implements tools.Tool.
func (*SearchTool) Name() string { return "skill_search" }

// Description implements tools.Tool.
func (*SearchTool) Description() string {
	return "Find skills (instructions and files for particular tasks) by what they do: ranks the skills you may use " +
		"by their name, description and instructions. Then call use_skill with the name of the one that fits."
}

// Parameters implements tools.Tool.
func (*SearchTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"words describing the task"},` +
		`"limit":{"type":"integer","minimum":1,"maximum":20}},"required":["query"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool.
func (*SearchTool) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements tools.Tool.
func (t *SearchTool) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Query string `json:"query"`
		Limit int    `json:"limit"`
	}
	if err := decodeArgs(raw, &a, `{"query": "words", "limit"?: 5}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	q := strings.TrimSpace(a.Query)
	if q == "" {
		return tools.ErrorResult(`"query" is empty; pass words describing the task, e.g. {"query": "release notes"}`)
	}
	q = clip(q, maxQueryLen)
	limit := a.Limit
	if limit <= 0 {
		limit = defaultHits
	}
	limit = min(limit, maxHits)
	call, _ := tools.CallFrom(ctx)
	hits, err := t.o.Catalog.Search(ctx, call.Agent, q, limit)
	if err != nil {
		t.o.Logger.Error("skill search", "agent", call.Agent, "err", err)
		return tools.ErrorResult("could not search the skills right now (storage unavailable); try again in a moment")
	}
	if len(hits) == 0 {
		return tools.Result{ForLLM: fmt.Sprintf("No skill matches %q. Try other or fewer words; the skills you may use are also listed in your instructions.", q)}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d skill(s) match %q, best first; use_skill {\"name\": NAME} reads one:", len(hits), q)
	for _, e := range hits {
		fmt.Fprintf(&b, "\n- %s (%s): %s", e.Name, e.kind(), e.Description)
	}
	return tools.Result{ForLLM: b.String()}
}

// kind is e's source for the model: "from skills.dirs" or "published vN".
func (e Entry) kind() string {
	if e.Folder != "" {
		return "from skills.dirs"
	}
	return fmt.Sprintf("published v%d", e.Version)
}

// UseTool is use_skill: the skill's instructions into the conversation,
// its files into the workspace.
type UseTool struct{ o ToolOptions }

// Name implements tools.Tool.
func (*UseTool) Name() string { return "use_skill" }

// Description implements tools.Tool.
func (*UseTool) Description() string {
	return "Read a skill: returns its instructions (SKILL.md) and puts its files in your workspace under skills/NAME/ " +
		"(read-only; read them with read_file, run its scripts with exec). A skill grants no permissions: its commands need the usual approvals."
}

// Parameters implements tools.Tool.
func (*UseTool) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"name":{"type":"string","description":"the skill's name"}},` +
		`"required":["name"],"additionalProperties":false}`)
}

// SideEffect implements tools.Tool: it only copies a skill's files into
// the caller's own workspace, read-only.
func (*UseTool) SideEffect() tools.SideEffect { return tools.SideEffectReadOnly }

// Execute implements tools.Tool.
func (t *UseTool) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct {
		Name string `json:"name"`
	}
	if err := decodeArgs(raw, &a, `{"name": "skill-name"}`); err != nil {
		return tools.ErrorResult(err.Error())
	}
	if !config.IsSkillName(a.Name) {
		return tools.ErrorResult(fmt.Sprintf("%q is not a skill name; skill_search finds the skills you may use", clip(a.Name, 80)))
	}
	call, _ := tools.CallFrom(ctx)
	if call.Session == "" {
		return tools.ErrorResult("use_skill works only inside a conversation")
	}
	e, ok, err := t.o.Catalog.Find(ctx, call.Agent, a.Name)
	if err != nil {
		t.o.Logger.Error("find skill", "skill", a.Name, "err", err)
		return tools.ErrorResult("could not look up the skill right now (storage unavailable); try again in a moment")
	}
	if !ok {
		return tools.ErrorResult(fmt.Sprintf("no skill called %s is available to you (it does not exist, is not allowed for you, or an admin turned it off); skill_search finds the ones you may use", a.Name))
	}
	files, body, err := t.files(ctx, e)
	if err != nil {
		t.o.Logger.Warn("skill unreadable", "skill", e.Name, "source", e.Source(), "err", err)
		return tools.ErrorResult(fmt.Sprintf("skill %s cannot be read right now (%v); tell an admin, or pick another skill", e.Name, err))
	}
	ws, err := t.o.Workspace(call)
	if err == nil {
		err = install(ws, e.Name, files)
	}
	if err != nil {
		t.o.Logger.Error("install skill files", "skill", e.Name, "session", call.Session, "err", err)
		return tools.ErrorResult(fmt.Sprintf("could not put skill %s's files in the workspace: %v", e.Name, err))
	}
	t.o.Logger.Info("skill used", "skill", e.Name, "source", e.Source(), "agent", call.Agent, "session", call.Session)
	return tools.Result{ForLLM: useText(e, files, body)}
}

// files reads e's files: again from its folder, or from the store.
func (t *UseTool) files(ctx context.Context, e Entry) ([]File, string, error) {
	if e.Folder != "" {
		s, err := ReadFolder(e.Folder)
		if err != nil {
			return nil, "", err
		}
		if s.Name != e.Name {
			return nil, "", fmt.Errorf("its SKILL.md now names %s", s.Name)
		}
		return s.Files, s.Body, nil
	}
	files, err := t.o.Store.SkillFiles(ctx, e.ID)
	if err != nil {
		return nil, "", fmt.Errorf("storage unavailable")
	}
	return files, e.body, nil
}

// useText is use_skill's result: where the files are, that the skill
// grants nothing, then the instructions (bounded).
func useText(e Entry, files []File, body string) string {
	dir := toolfs.SkillsDir + "/" + e.Name + "/"
	var b strings.Builder
	fmt.Fprintf(&b, "Skill %s (%s). Its files are in your workspace under %s (read-only; copy a file elsewhere to change it):", e.Name, e.kind(), dir)
	for _, f := range files {
		fmt.Fprintf(&b, "\n- %s%s (%s)", dir, f.Path, size(len(f.Data)))
	}
	b.WriteString("\nThe skill grants no permissions: run its scripts with exec (e.g. sh " + dir + "script.sh), which asks for the same approvals as any command.")
	shown := body
	if len(shown) > MaxBodyShown {
		shown = clip(shown, MaxBodyShown) + "\n[instructions cut here; read_file " + dir + Manifest + " has the rest]"
	}
	b.WriteString("\n\nInstructions (" + Manifest + "):\n" + shown)
	return b.String()
}

// size renders n bytes for people: "812 B", "3.4 KiB".
func size(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%d B", n)
	case n < 1<<20:
		return fmt.Sprintf("%.1f KiB", float64(n)/1024)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
