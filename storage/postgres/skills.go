package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/skills"
)

var _ skills.Store = (*DB)(nil)

// Audit actions and subject kind of skills.
const (
	ActionSkillPublished = "skill.published"
	ActionSkillRejected  = "skill.rejected"
	ActionSkillDisabled  = "skill.disabled"
	ActionSkillEnabled   = "skill.enabled"
	// SubjectSkill is a skill; its SubjectID is the skill's name.
	SubjectSkill = "skill"
)

// snapshotCols are the columns scanSnapshot reads, in order.
const snapshotCols = `id, name, description, body, status, coalesce(version, 0), session_key, tool_call_id,
	agent, requester, created_at`

// SnapshotSkill stores s as a pending snapshot with its files, in one
// transaction, unless (Session, ToolCallID) has one: then that one is
// returned, files included, with created=false.
func (db *DB) SnapshotSkill(ctx context.Context, s skills.Snapshot) (skills.Snapshot, bool, error) {
	if s.Session == "" || s.ToolCallID == "" {
		return skills.Snapshot{}, false, errors.New("snapshot skill: the call has no session or tool call id")
	}
	var (
		stored  skills.Snapshot
		created bool
	)
	err := withRetry(ctx, func(ctx context.Context) error {
		created = false
		return pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			sk := s.Skill
			var err error
			stored, err = scanSnapshot(tx.QueryRow(ctx, `INSERT INTO skills
					(name, description, body, session_key, tool_call_id, agent, requester)
				VALUES ($1, $2, $3, $4, $5, $6, $7)
				ON CONFLICT (session_key, tool_call_id) DO NOTHING
				RETURNING `+snapshotCols,
				storable(sk.Name), storable(sk.Description), storable(sk.Body), storable(s.Session),
				storable(s.ToolCallID), storable(s.Agent), storable(s.Requester)))
			if errors.Is(err, pgx.ErrNoRows) {
				stored, err = scanSnapshot(tx.QueryRow(ctx, `SELECT `+snapshotCols+` FROM skills
					WHERE session_key = $1 AND tool_call_id = $2`, storable(s.Session), storable(s.ToolCallID)))
				if err != nil {
					return err
				}
				stored.Skill.Files, err = skillFiles(ctx, tx, stored.ID)
				return err
			}
			if err != nil {
				return err
			}
			created = true
			b := &pgx.Batch{}
			for _, f := range sk.Files {
				b.Queue(`INSERT INTO skill_files (skill_id, path, data) VALUES ($1, $2, $3)`, stored.ID, storable(f.Path), f.Data)
			}
			if err := tx.SendBatch(ctx, b).Close(); err != nil {
				return err
			}
			stored.Skill.Files = sk.Files
			return nil
		})
	})
	if err != nil {
		return skills.Snapshot{}, false, fmt.Errorf("snapshot skill %s: %w", s.Skill.Name, err)
	}
	return stored, created, nil
}

// FindSnapshot returns the snapshot made by the call (session,
// toolCallID), files included.
func (db *DB) FindSnapshot(ctx context.Context, session, toolCallID string) (skills.Snapshot, bool, error) {
	type found struct {
		s  skills.Snapshot
		ok bool
	}
	f, err := retryValue(ctx, func(ctx context.Context) (found, error) {
		s, err := scanSnapshot(db.pool.QueryRow(ctx, `SELECT `+snapshotCols+` FROM skills
			WHERE session_key = $1 AND tool_call_id = $2`, storable(session), storable(toolCallID)))
		if errors.Is(err, pgx.ErrNoRows) {
			return found{}, nil
		}
		if err != nil {
			return found{}, err
		}
		s.Skill.Files, err = skillFiles(ctx, db.pool, s.ID)
		return found{s, true}, err
	})
	if err != nil {
		return skills.Snapshot{}, false, fmt.Errorf("find skill snapshot of %s/%s: %w", session, toolCallID, err)
	}
	return f.s, f.ok, nil
}

// PublishSkill makes pending snapshot id the next version of its name
// (one after the newest published), with its audit record, in one
// transaction holding the name's lock, so concurrent publications of one
// name get distinct versions.
func (db *DB) PublishSkill(ctx context.Context, id int64, by string) (skills.Snapshot, error) {
	s, err := retryValue(ctx, func(ctx context.Context) (skills.Snapshot, error) {
		var s skills.Snapshot
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			var err error
			if s, err = lockSnapshot(ctx, tx, id); err != nil || s.Status != skills.StatusPending {
				return err
			}
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('skill:' || $1))`, s.Skill.Name); err != nil {
				return err
			}
			s, err = scanSnapshot(tx.QueryRow(ctx, `UPDATE skills SET status = 'published', decided_at = now(),
					version = (SELECT coalesce(max(version), 0) + 1 FROM skills WHERE name = $2 AND status = 'published')
				WHERE id = $1 RETURNING `+snapshotCols, id, s.Skill.Name))
			if err != nil {
				return err
			}
			return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: ActionSkillPublished, SubjectKind: SubjectSkill,
				SubjectID: s.Skill.Name, Detail: map[string]any{"version": s.Version, "agent": s.Agent, "session": s.Session}})
		})
		return s, err
	})
	if err != nil {
		return skills.Snapshot{}, fmt.Errorf("publish skill snapshot %d: %w", id, err)
	}
	if s.Status == skills.StatusRejected {
		return s, fmt.Errorf("publish skill snapshot %d: it was rejected; ask to publish again", id)
	}
	return s, nil
}

// RejectSkill marks pending snapshot id rejected, with its audit record.
func (db *DB) RejectSkill(ctx context.Context, id int64, by, why string) (skills.Snapshot, error) {
	s, err := retryValue(ctx, func(ctx context.Context) (skills.Snapshot, error) {
		var s skills.Snapshot
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			var err error
			if s, err = lockSnapshot(ctx, tx, id); err != nil || s.Status != skills.StatusPending {
				return err
			}
			s, err = scanSnapshot(tx.QueryRow(ctx, `UPDATE skills SET status = 'rejected', decided_at = now()
				WHERE id = $1 RETURNING `+snapshotCols, id))
			if err != nil {
				return err
			}
			return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: ActionSkillRejected, SubjectKind: SubjectSkill,
				SubjectID: s.Skill.Name, Detail: map[string]any{"why": why, "agent": s.Agent, "session": s.Session}})
		})
		return s, err
	})
	if err != nil {
		return skills.Snapshot{}, fmt.Errorf("reject skill snapshot %d: %w", id, err)
	}
	return s, nil
}

// lockSnapshot reads snapshot id FOR UPDATE, or bot.ErrNotFound.
func lockSnapshot(ctx context.Context, tx pgx.Tx, id int64) (skills.Snapshot, error) {
	s, err := scanSnapshot(tx.QueryRow(ctx, `SELECT `+snapshotCols+` FROM skills WHERE id = $1 FOR UPDATE`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return s, fmt.Errorf("skill snapshot %d: %w", id, bot.ErrNotFound)
	}
	return s, err
}

// PublishedSkills returns the newest published version of each name,
// sorted by name.
func (db *DB) PublishedSkills(ctx context.Context, withBody bool) ([]skills.Published, error) {
	list, err := retryValue(ctx, func(ctx context.Context) ([]skills.Published, error) {
		rows, err := db.pool.Query(ctx, `SELECT DISTINCT ON (name) id, name, description,
				CASE WHEN $1 THEN body ELSE '' END, version, decided_at
			FROM skills WHERE status = 'published' ORDER BY name, version DESC`, withBody)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, func(row pgx.CollectableRow) (skills.Published, error) {
			var (
				p  skills.Published
				at *time.Time
			)
			err := row.Scan(&p.ID, &p.Name, &p.Description, &p.Body, &p.Version, &at)
			if at != nil {
				p.PublishedAt = *at
			}
			return p, err
		})
	})
	if err != nil {
		return nil, fmt.Errorf("list published skills: %w", err)
	}
	return list, nil
}

// SkillFiles returns the files of snapshot id, sorted by path.
func (db *DB) SkillFiles(ctx context.Context, id int64) ([]skills.File, error) {
	files, err := retryValue(ctx, func(ctx context.Context) ([]skills.File, error) {
		return skillFiles(ctx, db.pool, id)
	})
	if err != nil {
		return nil, fmt.Errorf("read files of skill snapshot %d: %w", id, err)
	}
	return files, nil
}

// querier is a pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// skillFiles reads the files of snapshot id.
func skillFiles(ctx context.Context, q querier, id int64) ([]skills.File, error) {
	rows, err := q.Query(ctx, `SELECT path, data FROM skill_files WHERE skill_id = $1 ORDER BY path`, id)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (skills.File, error) {
		var f skills.File
		return f, row.Scan(&f.Path, &f.Data)
	})
}

// maxRankedBody bounds the part of each body full-text search reads.
const maxRankedBody = 64 << 10

// RankSkills ranks docs against the words of query with PostgreSQL full
// text: a match in the name weighs most, then the description, then the
// body; a doc matching any word is found, more words rank higher.
func (db *DB) RankSkills(ctx context.Context, query string, docs []skills.Doc, limit int) ([]string, error) {
	if len(docs) == 0 || limit <= 0 {
		return nil, nil
	}
	names, descs, bodies := make([]string, len(docs)), make([]string, len(docs)), make([]string, len(docs))
	for i, d := range docs {
		names[i], descs[i], bodies[i] = storable(d.Name), storable(d.Description), storable(truncate(d.Body, maxRankedBody))
	}
	out, err := retryValue(ctx, func(ctx context.Context) ([]string, error) {
		rows, err := db.pool.Query(ctx, `WITH q AS (
				SELECT nullif(replace(plainto_tsquery('english', $1)::text, ' & ', ' | '), '')::tsquery AS q
			), d AS (
				SELECT name, setweight(to_tsvector('english', replace(name, '-', ' ')), 'A')
					|| setweight(to_tsvector('english', description), 'B')
					|| setweight(to_tsvector('english', body), 'C') AS v
				FROM unnest($2::text[], $3::text[], $4::text[]) AS d (name, description, body)
			)
			SELECT d.name FROM d, q WHERE d.v @@ q.q
			ORDER BY ts_rank(d.v, q.q) DESC, d.name LIMIT $5`,
			storable(query), names, descs, bodies, limit)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	})
	if err != nil {
		return nil, fmt.Errorf("search skills: %w", err)
	}
	return out, nil
}

// DisabledSkills lists the names turned off, sorted.
func (db *DB) DisabledSkills(ctx context.Context) ([]string, error) {
	out, err := retryValue(ctx, func(ctx context.Context) ([]string, error) {
		rows, err := db.pool.Query(ctx, `SELECT name FROM skill_states WHERE disabled ORDER BY name`)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	})
	if err != nil {
		return nil, fmt.Errorf("list disabled skills: %w", err)
	}
	return out, nil
}

// SetSkillDisabled turns name off or on again, with its audit record when
// that changed something.
func (db *DB) SetSkillDisabled(ctx context.Context, name string, disabled bool, by string) (bool, error) {
	if name == "" {
		return false, errors.New("set skill state: empty name")
	}
	changed, err := retryValue(ctx, func(ctx context.Context) (bool, error) {
		changed := false
		err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
			// Enabling a name never disabled changes nothing.
			tag, err := tx.Exec(ctx, `INSERT INTO skill_states (name, disabled, changed_by)
				SELECT $1, $2, $3 WHERE $2 OR EXISTS (SELECT 1 FROM skill_states WHERE name = $1)
				ON CONFLICT (name) DO UPDATE SET disabled = excluded.disabled, changed_by = excluded.changed_by, changed_at = now()
				WHERE skill_states.disabled <> excluded.disabled`, storable(name), disabled, storable(by))
			if err != nil || tag.RowsAffected() == 0 {
				return err
			}
			changed = true
			action := ActionSkillEnabled
			if disabled {
				action = ActionSkillDisabled
			}
			return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: action, SubjectKind: SubjectSkill, SubjectID: name})
		})
		return changed, err
	})
	if err != nil {
		return false, fmt.Errorf("set skill %s disabled=%v: %w", name, disabled, err)
	}
	return changed, nil
}

// scanSnapshot reads one row of snapshotCols (without files).
func scanSnapshot(row pgx.Row) (skills.Snapshot, error) {
	var s skills.Snapshot
	err := row.Scan(&s.ID, &s.Skill.Name, &s.Skill.Description, &s.Skill.Body, &s.Status, &s.Version,
		&s.Session, &s.ToolCallID, &s.Agent, &s.Requester, &s.CreatedAt)
	return s, err
}
