package skills

import (
	"context"
	"time"
)

// Snapshot statuses.
const (
	StatusPending   = "pending"   // shown to the approvers, not decided
	StatusPublished = "published" // a version agents see (the newest of its name)
	StatusRejected  = "rejected"  // the approvers said no, or nobody decided
)

// Snapshot is one publish_skill request as the approvers see it: the
// skill's files copied when it was asked, so a change in the workspace
// afterwards changes nothing that is published.
type Snapshot struct {
	ID    int64
	Skill Skill
	// Status is StatusPending, StatusPublished or StatusRejected.
	Status string
	// Version is set once published: 1 for a name's first, then one more
	// for each publication of the name.
	Version int
	// Session and ToolCallID are the call that asked; a call repeated
	// after its approval finds its snapshot by them.
	Session, ToolCallID string
	Agent, Requester    string
	CreatedAt           time.Time
}

// Published is the newest published version of a skill, without files.
type Published struct {
	ID          int64
	Name        string
	Description string
	Body        string
	Version     int
	PublishedAt time.Time
}

// Doc is a skill as ranked by full-text search.
type Doc struct {
	Name, Description, Body string
}

// Store keeps published skills and the disabled list durable; PostgreSQL
// implements it.
type Store interface {
	// SnapshotSkill stores s (Skill, Session, ToolCallID, Agent,
	// Requester) as pending, unless a snapshot of the same (Session,
	// ToolCallID) exists: then it returns that one, files included, with
	// created=false.
	SnapshotSkill(ctx context.Context, s Snapshot) (stored Snapshot, created bool, err error)
	// FindSnapshot returns the snapshot of the call (session, toolCallID),
	// files included; found is false when that call made none.
	FindSnapshot(ctx context.Context, session, toolCallID string) (s Snapshot, found bool, err error)
	// PublishSkill makes pending snapshot id the next version of its name
	// and audits it (actor by); a snapshot published before is returned
	// as it is. A rejected one is an error.
	PublishSkill(ctx context.Context, id int64, by string) (Snapshot, error)
	// RejectSkill marks pending snapshot id rejected and audits it with
	// why; one decided before is returned as it is.
	RejectSkill(ctx context.Context, id int64, by, why string) (Snapshot, error)
	// PublishedSkills returns the newest published version of every name,
	// sorted by name; Body only when withBody (search needs it, the
	// prompt and the lists do not).
	PublishedSkills(ctx context.Context, withBody bool) ([]Published, error)
	// SkillFiles returns the files of snapshot id, sorted by path.
	SkillFiles(ctx context.Context, id int64) ([]File, error)
	// RankSkills ranks docs against query with full-text search (name
	// first, then description, then body) and returns the names of those
	// that match, best first, at most limit.
	RankSkills(ctx context.Context, query string, docs []Doc, limit int) ([]string, error)
	// DisabledSkills lists the names /skills disable turned off.
	DisabledSkills(ctx context.Context) ([]string, error)
	// SetSkillDisabled turns name off (or on again), audited with by as
	// the actor, and reports whether that changed anything.
	SetSkillDisabled(ctx context.Context, name string, disabled bool, by string) (changed bool, err error)
}
