package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/storage/secretbox"
	"github.com/switchboard-chat/switchboard/tools/exec"
)

// ErrNoSecretsKey: stored secrets exist (or are to be stored) and no key
// is configured.
var ErrNoSecretsKey = errors.New("no secrets key is configured: set secrets.key_file or SWITCHBOARD_SECRETS_KEY " +
	"(make one with: head -c 32 /dev/urandom | base64)")

// CustomTools keeps run-time custom tools, their env values sealed with
// Box (nil: tools without env only).
type CustomTools struct {
	DB  *DB
	Box *secretbox.Box
}

// List returns every stored custom tool, env opened. It fails with
// ErrNoSecretsKey when a tool has env and no key is configured, and with
// secretbox.ErrWrongKey when the key is not the one they were sealed with.
func (c CustomTools) List(ctx context.Context) ([]exec.CustomSpec, error) {
	rows, err := c.DB.pool.Query(ctx, `SELECT name, description, parameters, command, timeout_ms, env FROM custom_tools ORDER BY name`,
		c.DB.once()...) // read at start only
	if err != nil {
		return nil, fmt.Errorf("custom tools: %w", err)
	}
	type row struct {
		spec exec.CustomSpec
		env  map[string]string
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		var ms int64
		err := r.Scan(&x.spec.Name, &x.spec.Description, &x.spec.Parameters, &x.spec.Command, &ms, &x.env)
		x.spec.Timeout = time.Duration(ms) * time.Millisecond
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("custom tools: %w", err)
	}
	out := make([]exec.CustomSpec, 0, len(list))
	for _, x := range list {
		env, err := openMap(c.Box, x.env, "custom tool "+x.spec.Name+" env")
		if err != nil {
			return nil, err
		}
		x.spec.Env = env
		out = append(out, x.spec)
	}
	return out, nil
}

// Put stores spec (replacing one of the same name), env sealed, audited.
func (c CustomTools) Put(ctx context.Context, spec exec.CustomSpec, by string) error {
	env, err := c.seal(spec.Env)
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, c.DB.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO custom_tools (name, description, parameters, command, timeout_ms, env, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7)
			ON CONFLICT (name) DO UPDATE SET description = $2, parameters = $3, command = $4, timeout_ms = $5, env = $6,
				created_by = $7, updated_at = now()`,
			spec.Name, storable(spec.Description), spec.Parameters, spec.Command, spec.Timeout.Milliseconds(), env, storable(by)); err != nil {
			return fmt.Errorf("store custom tool %s: %w", spec.Name, err)
		}
		names := make([]string, 0, len(spec.Env))
		for k := range spec.Env {
			names = append(names, k)
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: "custom_tool.put", SubjectKind: "custom_tool", SubjectID: spec.Name,
			Detail: map[string]any{"command": spec.Command, "env_names": names}})
	})
}

// Delete removes the custom tool called name, audited; it reports whether
// there was one.
func (c CustomTools) Delete(ctx context.Context, name, by string) (bool, error) {
	var found bool
	err := pgx.BeginFunc(ctx, c.DB.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM custom_tools WHERE name = $1`, name)
		if err != nil {
			return err
		}
		found = tag.RowsAffected() > 0
		if !found {
			return nil
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: "custom_tool.deleted", SubjectKind: "custom_tool", SubjectID: name})
	})
	if err != nil {
		return false, fmt.Errorf("delete custom tool %s: %w", name, err)
	}
	return found, nil
}

// Rotate re-seals every stored env value with next, in one transaction;
// the current Box must open them. Afterwards configure next's key.
func (c CustomTools) Rotate(ctx context.Context, next *secretbox.Box) (int, error) {
	specs, err := c.List(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	err = pgx.BeginFunc(ctx, c.DB.pool, func(tx pgx.Tx) error {
		for _, s := range specs {
			if len(s.Env) == 0 {
				continue
			}
			env, err := (CustomTools{Box: next}).seal(s.Env)
			if err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `UPDATE custom_tools SET env = $2, updated_at = now() WHERE name = $1`, s.Name, env); err != nil {
				return err
			}
			n++
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: "switchboard secrets rotate", Action: "secrets.rotated",
			SubjectKind: "custom_tool", SubjectID: "*", Detail: map[string]any{"tools": n}})
	})
	if err != nil {
		return 0, fmt.Errorf("rotate secrets: %w", err)
	}
	return n, nil
}

// seal encrypts env's values.
func (c CustomTools) seal(env map[string]string) (json.RawMessage, error) { return sealMap(c.Box, env) }
