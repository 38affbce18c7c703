package fs_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// TestFSRefusesWritesUnderSkills: write_file and edit never change the
// files use_skill put under skills/, directly, by an absolute path or
// through a symlink; read_file still reads them.
func TestFSRefusesWritesUnderSkills(t *testing.T) {
	w := newFSWorld(t)
	toolstest.Must(t, os.MkdirAll(filepath.Join(w.ws, "skills", "deploy"), 0o755))
	toolstest.Must(t, os.WriteFile(filepath.Join(w.ws, "skills", "deploy", "SKILL.md"), []byte("original"), 0o644))
	toolstest.Must(t, os.Symlink("skills/deploy", filepath.Join(w.ws, "to-skill")))
	for _, p := range []string{"skills/deploy/SKILL.md", "./skills/deploy/new.txt", "skills", "sub/../skills/x",
		filepath.Join(w.ws, "skills/deploy/SKILL.md"), "to-skill/SKILL.md"} {
		r := w.run("write_file", map[string]any{"path": p, "content": "changed"})
		if !r.IsError || !strings.Contains(r.ForLLM, "read-only") || !strings.Contains(r.ForLLM, "copy it elsewhere") {
			t.Errorf("write_file %s = %+v; want a read-only refusal saying what to do", p, r)
		}
		r = w.run("edit", map[string]any{"path": p, "old_text": "original", "new_text": "changed"})
		if !r.IsError || !strings.Contains(r.ForLLM, "read-only") {
			t.Errorf("edit %s = %+v; want a read-only refusal", p, r)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(w.ws, "skills", "deploy", "SKILL.md")); string(b) != "original" {
		t.Fatalf("SKILL.md = %q", b)
	}
	if r := w.run("read_file", map[string]any{"path": "skills/deploy/SKILL.md"}); r.IsError || !strings.Contains(r.ForLLM, "original") {
		t.Fatalf("read_file = %+v", r)
	}
	if r := w.run("write_file", map[string]any{"path": "skillset/notes.txt", "content": "x"}); r.IsError {
		t.Fatalf("a path merely starting with skills was refused: %+v", r)
	}
}
