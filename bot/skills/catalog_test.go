package skills

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// skillsDir writes one skill folder per name (description "Does NAME")
// into a new skills dir.
func skillsDir(t *testing.T, names ...string) string {
	t.Helper()
	files := map[string]string{}
	for _, n := range names {
		files[filepath.Join(n, Manifest)] = "---\nname: " + n + "\ndescription: Does " + n + "\n---\nBody of " + n
	}
	return writeSkill(t, files)
}

// TestCatalogAllowListsAndSources: skills.allow, an agent's own list
// replacing it, a folder winning over a published skill of its name, and
// a disabled skill listed but neither usable, found nor in the prompt.
func TestCatalogAllowListsAndSources(t *testing.T) {
	ctx := context.Background()
	dir := skillsDir(t, "deploy", "triage")
	store := &memStore{published: []Published{
		{ID: 1, Name: "deploy", Description: "Published deploy", Version: 3},
		{ID: 2, Name: "reports", Description: "Writes reports", Version: 1},
	}}
	c := NewCatalog(CatalogOptions{
		Dirs: NewDirs([]string{dir}, nil), Store: store,
		Allow:      []string{"deploy", "reports"},
		AgentAllow: map[string][]string{"ops": {"triage", "reports"}},
	})
	names := func(agent string) string {
		t.Helper()
		list, err := c.List(ctx, agent)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range list {
			out = append(out, e.Name+"="+e.Source())
		}
		return strings.Join(out, ",")
	}
	// skills.allow for an agent without a list of its own; a directory
	// skill wins over a published one of the same name and says so.
	if got, want := names("main"), "deploy=dir "+filepath.Join(dir, "deploy")+",reports=published v1"; got != want {
		t.Fatalf("main sees %s, want %s", got, want)
	}
	if got := names("ops"); got != "reports=published v1,triage=dir "+filepath.Join(dir, "triage") {
		t.Fatalf("ops (agents[].skills replaces skills.allow) sees %s", got)
	}
	list, _ := c.List(ctx, "main")
	if list[0].Shadows != 3 || list[0].Description != "Does deploy" {
		t.Fatalf("deploy = %+v; want the folder's, shadowing published v3", list[0])
	}
	all := NewCatalog(CatalogOptions{Dirs: NewDirs([]string{dir}, nil), Store: store})
	if got, _ := all.List(ctx, "anyone"); len(got) != 3 {
		t.Fatalf("empty allow lists: %d skills, want all 3", len(got))
	}
	// Disabled: listed for /skills, but neither usable, found nor in the prompt.
	store.disabled = []string{"reports"}
	if e, ok, _ := c.Find(ctx, "main", "reports"); ok {
		t.Fatalf("disabled skill found: %+v", e)
	}
	if got, _ := c.List(ctx, "main"); !got[1].Disabled {
		t.Fatalf("/skills list does not mark reports disabled: %+v", got)
	}
	if p, _ := c.Prompt(ctx, "main"); strings.Contains(p, "reports") || !strings.Contains(p, "- deploy: Does deploy") {
		t.Fatalf("prompt = %q", p)
	}
	if hits, _ := c.Search(ctx, "main", "reports deploy", 5); len(hits) != 1 || hits[0].Name != "deploy" {
		t.Fatalf("search = %+v; want deploy only", hits)
	}
	if _, ok, _ := c.Find(ctx, "main", "triage"); ok {
		t.Fatal("a skill outside main's allow list was found")
	}
}

// TestPromptIsBoundedAndSorted: the prompt lists the skills, sorted and
// the same each time, while they fit; past 40 skills or 4 KB one line
// says how many there are.
func TestPromptIsBoundedAndSorted(t *testing.T) {
	entries := func(n, descLen int) []Entry {
		var out []Entry
		for i := range n {
			out = append(out, Entry{Name: fmt.Sprintf("skill-%02d", i), Description: strings.Repeat("d", descLen)})
		}
		return out
	}
	p := promptFor(entries(3, 10))
	if !strings.Contains(p, "- skill-00: dddddddddd\n- skill-01") || !strings.Contains(p, "use_skill") {
		t.Fatalf("small prompt = %q", p)
	}
	for _, tc := range []struct {
		n, desc int
		why     string
	}{{MaxPromptSkills + 1, 5, "too many"}, {10, 500, "too long"}} {
		p := promptFor(entries(tc.n, tc.desc))
		if len(p) > MaxPromptBytes || strings.Contains(p, "skill-00") || !strings.Contains(p, fmt.Sprintf("%d skills are available", tc.n)) {
			t.Errorf("%s: prompt = %q", tc.why, p)
		}
	}
	if p := promptFor(entries(MaxPromptSkills, 40)); len(p) > MaxPromptBytes || !strings.Contains(p, "skill-39") {
		t.Errorf("40 short skills: prompt (%d bytes) lists them all? %q", len(p), p)
	}
	// The same skills give the same text, whatever order they came in.
	ctx := context.Background()
	c := NewCatalog(CatalogOptions{Dirs: NewDirs([]string{skillsDir(t, "zeta", "alpha", "mid")}, nil), Store: &memStore{}})
	a, _ := c.Prompt(ctx, "main")
	b, _ := c.Prompt(ctx, "main")
	if a != b || strings.Index(a, "alpha") > strings.Index(a, "mid") || strings.Index(a, "mid") > strings.Index(a, "zeta") {
		t.Fatalf("prompt not sorted or not stable: %q", a)
	}
	if p, _ := NewCatalog(CatalogOptions{Store: &memStore{}}).Prompt(ctx, "main"); p != "" {
		t.Fatalf("no skills: prompt = %q, want none", p)
	}
}

// TestDirsSkipInvalidFoldersAndRescan: invalid and duplicate folders are
// skipped with the reason; a rescan reads again only after a change.
func TestDirsSkipInvalidFoldersAndRescan(t *testing.T) {
	dir := skillsDir(t, "good")
	if err := writeFile(filepath.Join(dir, "broken", Manifest), "---\nname: Broken!\ndescription: x\n---\n"); err != nil {
		t.Fatal(err)
	}
	if err := writeFile(filepath.Join(dir, "twin", Manifest), "---\nname: good\ndescription: a second good\n---\n"); err != nil {
		t.Fatal(err)
	}
	d := NewDirs([]string{dir, filepath.Join(dir, "does-not-exist")}, nil)
	if all := d.All(); len(all) != 1 || all[0].Name != "good" {
		t.Fatalf("skills = %+v; want only good", all)
	}
	if p := strings.Join(d.Problems(), "\n"); !strings.Contains(p, "broken: \"Broken!\" is not a skill name") || !strings.Contains(p, "twin: skill good is already in") {
		t.Fatalf("problems = %s", p)
	}
	if d.Rescan() {
		t.Fatal("rescan without a change read the folders again")
	}
	if err := writeFile(filepath.Join(dir, "added", Manifest), "---\nname: added\ndescription: Added later\n---\n"); err != nil {
		t.Fatal(err)
	}
	if !d.Rescan() {
		t.Fatal("a new skill folder was not noticed")
	}
	if s, ok := d.Get("added"); !ok || s.Description != "Added later" {
		t.Fatalf("added = %+v, %v", s, ok)
	}
}
