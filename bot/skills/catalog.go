package skills

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
)

// Prompt bounds: the skills section of a system prompt lists every
// allowed skill while they fit, else says how many there are.
const (
	MaxPromptSkills = 40
	MaxPromptBytes  = 4096
)

// Entry is one skill as an agent sees it: from a folder of skills.dirs or
// published, which one wins when both have the name (the folder).
type Entry struct {
	Name, Description string
	// Folder is set for a directory skill.
	Folder string
	// Version and ID are set for a published skill (the newest version).
	Version int
	ID      int64
	// Shadows is the published version a directory skill of the same name
	// hides (0: none).
	Shadows int
	// Disabled: an admin turned it off (/skills disable).
	Disabled bool
	body     string
}

// Source says where e comes from: "dir FOLDER" or "published vN".
func (e Entry) Source() string {
	if e.Folder != "" {
		return "dir " + e.Folder
	}
	return fmt.Sprintf("published v%d", e.Version)
}

// CatalogOptions configures a Catalog.
type CatalogOptions struct {
	Dirs  *Dirs
	Store Store
	// Allow is skills.allow: the skills every agent may see; empty: all.
	Allow []string
	// AgentAllow is agents[].skills by agent name: when an agent has a
	// list, it replaces Allow for that agent.
	AgentAllow map[string][]string
	Logger     *slog.Logger
}

// Catalog merges the directory and published skills and answers, per
// agent, which ones it may see: its prompt section, search, and the skill
// to use.
type Catalog struct{ o CatalogOptions }

// NewCatalog returns the catalog.
func NewCatalog(o CatalogOptions) *Catalog {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Dirs == nil {
		o.Dirs = NewDirs(nil, o.Logger)
	}
	return &Catalog{o: o}
}

// Dirs is the catalog's directory source.
func (c *Catalog) Dirs() *Dirs { return c.o.Dirs }

// Allows reports whether agent may see the skill called name (its allow
// list), whatever its source or state.
func (c *Catalog) Allows(agent, name string) bool {
	list, own := c.o.AgentAllow[agent]
	if !own || len(list) == 0 {
		list = c.o.Allow
	}
	return len(list) == 0 || slices.Contains(list, name)
}

// List returns the skills agent may see, disabled ones included (marked),
// sorted by name: for /skills.
func (c *Catalog) List(ctx context.Context, agent string) ([]Entry, error) {
	return c.list(ctx, agent, false)
}

// list is List, with the skills' bodies when withBody.
func (c *Catalog) list(ctx context.Context, agent string, withBody bool) ([]Entry, error) {
	published, err := c.o.Store.PublishedSkills(ctx, withBody)
	if err != nil {
		return nil, err
	}
	disabled, err := c.o.Store.DisabledSkills(ctx)
	if err != nil {
		return nil, err
	}
	byName := map[string]Entry{}
	for _, p := range published {
		byName[p.Name] = Entry{Name: p.Name, Description: p.Description, Version: p.Version, ID: p.ID, body: p.Body}
	}
	for _, d := range c.o.Dirs.All() {
		e := Entry{Name: d.Name, Description: d.Description, Folder: d.Folder, body: d.Body}
		if p, ok := byName[d.Name]; ok {
			e.Shadows = p.Version
		}
		byName[d.Name] = e
	}
	out := make([]Entry, 0, len(byName))
	for name, e := range byName {
		if !c.Allows(agent, name) {
			continue
		}
		e.Disabled = slices.Contains(disabled, name)
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Exists reports whether a skill called name exists in any source, for
// any agent.
func (c *Catalog) Exists(ctx context.Context, name string) (bool, error) {
	if _, ok := c.o.Dirs.Get(name); ok {
		return true, nil
	}
	published, err := c.o.Store.PublishedSkills(ctx, false)
	if err != nil {
		return false, err
	}
	return slices.ContainsFunc(published, func(p Published) bool { return p.Name == name }), nil
}

// Usable returns the skills agent may use now: allowed and not disabled,
// sorted by name.
func (c *Catalog) Usable(ctx context.Context, agent string) ([]Entry, error) {
	return c.usable(ctx, agent, false)
}

// usable is Usable, with the skills' bodies when withBody.
func (c *Catalog) usable(ctx context.Context, agent string, withBody bool) ([]Entry, error) {
	all, err := c.list(ctx, agent, withBody)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(e Entry) bool { return e.Disabled }), nil
}

// Find returns the usable skill called name for agent; ok is false when
// there is none (unknown, not allowed or disabled).
func (c *Catalog) Find(ctx context.Context, agent, name string) (Entry, bool, error) {
	usable, err := c.usable(ctx, agent, true)
	if err != nil {
		return Entry{}, false, err
	}
	for _, e := range usable {
		if e.Name == name {
			return e, true, nil
		}
	}
	return Entry{}, false, nil
}

// Search ranks the skills agent may use against query, best first, at
// most limit: one full-text ranking for directory and published skills.
func (c *Catalog) Search(ctx context.Context, agent, query string, limit int) ([]Entry, error) {
	usable, err := c.usable(ctx, agent, true)
	if err != nil {
		return nil, err
	}
	docs := make([]Doc, len(usable))
	byName := map[string]Entry{}
	for i, e := range usable {
		docs[i] = Doc{Name: e.Name, Description: e.Description, Body: e.body}
		byName[e.Name] = e
	}
	names, err := c.o.Store.RankSkills(ctx, query, docs, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, 0, len(names))
	for _, n := range names {
		out = append(out, byName[n])
	}
	return out, nil
}

// Prompt is the skills section of agent's system prompt: each usable
// skill's name and description, sorted (the same text while nothing
// changes, so prompt caching holds), or, when they do not fit
// MaxPromptSkills and MaxPromptBytes, one line saying how many there are.
// "" when agent has none.
func (c *Catalog) Prompt(ctx context.Context, agent string) (string, error) {
	usable, err := c.Usable(ctx, agent)
	if err != nil || len(usable) == 0 {
		return "", err
	}
	return promptFor(usable), nil
}

// promptFor renders the skills section for entries (sorted).
func promptFor(entries []Entry) string {
	const head = "## Skills\nSkills are instructions (and files) for particular tasks. When one fits the task, " +
		"call use_skill {\"name\": NAME} to read it before you start; skill_search {\"query\": WORDS} finds skills by what they do."
	if len(entries) <= MaxPromptSkills {
		var b strings.Builder
		b.WriteString(head)
		for _, e := range entries {
			b.WriteString("\n- " + e.Name + ": " + e.Description)
		}
		if b.Len() <= MaxPromptBytes {
			return b.String()
		}
	}
	return fmt.Sprintf("## Skills\n%d skills are available, too many to list here: skill_search {\"query\": WORDS} finds the ones that fit a task, "+
		"and use_skill {\"name\": NAME} reads one before you start.", len(entries))
}
