package postgres

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/storage/secretbox"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// MCPServers keeps MCP servers added at run time, env and header values
// sealed with Box.
type MCPServers struct {
	DB  *DB
	Box *secretbox.Box
}

// List returns the stored servers, values opened.
func (m MCPServers) List(ctx context.Context) ([]mcp.Server, error) {
	rows, err := m.DB.pool.Query(ctx, `SELECT name, transport, command, url, env, headers, allow, deny, grant_agents, grant_users
		FROM mcp_servers ORDER BY name`, m.DB.once()...) // read at start only
	if err != nil {
		return nil, fmt.Errorf("mcp servers: %w", err)
	}
	type row struct {
		s            mcp.Server
		env, headers map[string]string
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
		var x row
		err := r.Scan(&x.s.Name, &x.s.Transport, &x.s.Command, &x.s.URL, &x.env, &x.headers,
			&x.s.Allow, &x.s.Deny, &x.s.GrantAgents, &x.s.GrantUsers)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("mcp servers: %w", err)
	}
	out := make([]mcp.Server, 0, len(list))
	for _, x := range list {
		if x.s.Env, err = openMap(m.Box, x.env, "mcp server "+x.s.Name+" env"); err != nil {
			return nil, err
		}
		if x.s.Headers, err = openMap(m.Box, x.headers, "mcp server "+x.s.Name+" headers"); err != nil {
			return nil, err
		}
		out = append(out, x.s)
	}
	return out, nil
}

// Put stores s (replacing one of the same name), audited.
func (m MCPServers) Put(ctx context.Context, s mcp.Server, by string) error {
	env, err := sealMap(m.Box, s.Env)
	if err != nil {
		return err
	}
	headers, err := sealMap(m.Box, s.Headers)
	if err != nil {
		return err
	}
	nz := func(v []string) []string {
		if v == nil {
			return []string{}
		}
		return v
	}
	return pgx.BeginFunc(ctx, m.DB.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO mcp_servers
				(name, transport, command, url, env, headers, allow, deny, grant_agents, grant_users, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (name) DO UPDATE SET transport = $2, command = $3, url = $4, env = $5, headers = $6,
				allow = $7, deny = $8, grant_agents = $9, grant_users = $10, created_by = $11`,
			s.Name, s.Transport, nz(s.Command), s.URL, env, headers, nz(s.Allow), nz(s.Deny),
			nz(s.GrantAgents), nz(s.GrantUsers), storable(by)); err != nil {
			return fmt.Errorf("store mcp server %s: %w", s.Name, err)
		}
		detail, _ := json.Marshal(map[string]any{"transport": s.Transport, "url": s.URL, "command": s.Command})
		var d map[string]any
		_ = json.Unmarshal(detail, &d)
		return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: "mcp_server.put", SubjectKind: "mcp_server", SubjectID: s.Name, Detail: d})
	})
}

// Delete removes a stored server, audited; it reports whether there was one.
func (m MCPServers) Delete(ctx context.Context, name, by string) (bool, error) {
	var found bool
	err := pgx.BeginFunc(ctx, m.DB.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `DELETE FROM mcp_servers WHERE name = $1`, name)
		if err != nil {
			return err
		}
		if found = tag.RowsAffected() > 0; !found {
			return nil
		}
		return writeAudit(ctx, tx, AuditEntry{Actor: by, Action: "mcp_server.deleted", SubjectKind: "mcp_server", SubjectID: name})
	})
	return found, err
}
