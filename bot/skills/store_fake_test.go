package skills

import (
	"context"
	"slices"
	"strings"
)

// memStore is an in-memory Store for the package's tests; RankSkills
// ranks by the number of query words in name, description and body.
type memStore struct {
	published []Published
	files     map[int64][]File
	disabled  []string
}

// SnapshotSkill implements Store.
func (m *memStore) SnapshotSkill(context.Context, Snapshot) (Snapshot, bool, error) {
	panic("not used")
}

// FindSnapshot implements Store.
func (m *memStore) FindSnapshot(context.Context, string, string) (Snapshot, bool, error) {
	panic("not used")
}

// PublishSkill implements Store.
func (m *memStore) PublishSkill(context.Context, int64, string) (Snapshot, error) { panic("not used") }

// RejectSkill implements Store.
func (m *memStore) RejectSkill(context.Context, int64, string, string) (Snapshot, error) {
	panic("not used")
}

// PublishedSkills implements Store.
func (m *memStore) PublishedSkills(context.Context, bool) ([]Published, error) {
	return m.published, nil
}

// SkillFiles implements Store.
func (m *memStore) SkillFiles(_ context.Context, id int64) ([]File, error) { return m.files[id], nil }

// RankSkills implements Store.
func (m *memStore) RankSkills(_ context.Context, query string, docs []Doc, limit int) ([]string, error) {
	var out []string
	for _, d := range docs {
		text := strings.ToLower(d.Name + " " + d.Description + " " + d.Body)
		for _, w := range strings.Fields(strings.ToLower(query)) {
			if strings.Contains(text, w) {
				out = append(out, d.Name)
				break
			}
		}
	}
	return out[:min(limit, len(out))], nil
}

// DisabledSkills implements Store.
func (m *memStore) DisabledSkills(context.Context) ([]string, error) { return m.disabled, nil }

// SetSkillDisabled implements Store.
func (m *memStore) SetSkillDisabled(_ context.Context, name string, disabled bool, _ string) (bool, error) {
	had := slices.Contains(m.disabled, name)
	if disabled == had {
		return false, nil
	}
	if disabled {
		m.disabled = append(m.disabled, name)
	} else {
		m.disabled = slices.DeleteFunc(m.disabled, func(n string) bool { return n == name })
	}
	return true, nil
}
