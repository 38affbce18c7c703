package postgres

import (
	"context"
	"slices"

	"github.com/switchboard-chat/switchboard/bot/skills"
)

// SkillsCache is DB with the skill lists every agent run reads for its
// system prompt (PublishedSkills, DisabledSkills) served from memory while
// it listens to the skills tables' change notices (migration 42): two
// round trips fewer per run. A change made through this cache is seen at
// once; one made by another replica as soon as its notice arrives
// (milliseconds). While it is not listening (before Listen runs, after a
// lost connection until it listens again) every read goes to PostgreSQL.
// Safe for concurrent use.
type SkillsCache struct {
	*DB
	published memo[[]skills.Published] // by "body" or "": with bodies or not
	disabled  memo[[]string]
}

// NewSkillsCache returns a cache in front of db's skills. Call Listen to
// start serving reads from memory.
func NewSkillsCache(db *DB) *SkillsCache {
	return &SkillsCache{DB: db, published: memo[[]skills.Published]{max: 2}, disabled: memo[[]string]{max: 1}}
}

// PublishedSkills implements skills.Store: DB.PublishedSkills, from memory
// when read since the last change.
func (c *SkillsCache) PublishedSkills(ctx context.Context, withBody bool) ([]skills.Published, error) {
	key := ""
	if withBody {
		key = "body"
	}
	return c.published.get(key, func() ([]skills.Published, error) {
		return c.DB.PublishedSkills(ctx, withBody)
	}, slices.Clone)
}

// DisabledSkills implements skills.Store: DB.DisabledSkills, from memory
// when read since the last change.
func (c *SkillsCache) DisabledSkills(ctx context.Context) ([]string, error) {
	return c.disabled.get("", func() ([]string, error) { return c.DB.DisabledSkills(ctx) }, slices.Clone)
}

// PublishSkill implements skills.Store: DB.PublishSkill, then forgets what
// is kept (the notice of this change arrives too, but later).
func (c *SkillsCache) PublishSkill(ctx context.Context, id int64, by string) (skills.Snapshot, error) {
	defer c.invalidate()
	return c.DB.PublishSkill(ctx, id, by)
}

// SetSkillDisabled implements skills.Store: DB.SetSkillDisabled, then
// forgets what is kept.
func (c *SkillsCache) SetSkillDisabled(ctx context.Context, name string, disabled bool, by string) (bool, error) {
	defer c.invalidate()
	return c.DB.SetSkillDisabled(ctx, name, disabled, by)
}

// Listen keeps a connection listening to the skills tables' notices until
// ctx ends, serving reads from memory while it does (see
// listenForChanges).
func (c *SkillsCache) Listen(ctx context.Context) {
	listenForChanges(ctx, c.DB, "skill notices", "skills", &c.published, &c.disabled)
}

func (c *SkillsCache) invalidate() {
	c.published.invalidate()
	c.disabled.invalidate()
}
