package main

import (
	"context"
	"net/http"

	// Named so: the e2e tests name the admin's user id admin.
	adminapi "github.com/switchboard-chat/switchboard/bot/admin"
	"github.com/switchboard-chat/switchboard/bot/jobs"
	llmusage "github.com/switchboard-chat/switchboard/bot/usage"
)

// adminAPI wires /api/v1; nil (off) without http.admin_token.
func (d *daemon) adminAPI() http.Handler {
	o := adminapi.Options{
		Token: d.cfg.HTTP.AdminToken, Approvals: d.approvals, Access: d.st.db, AccessDecisions: d.access,
		Jobs: jobs.AdminList(d.st.db), Agents: d.router, Sessions: d.st.db, Grants: d.st.db, CustomTools: d.customTools,
		Logger: d.log,
		Audit: func(ctx context.Context, limit int) ([]adminapi.AuditRecord, error) {
			entries, err := d.st.db.Audit(ctx, limit)
			out := make([]adminapi.AuditRecord, 0, len(entries))
			for _, e := range entries {
				out = append(out, adminapi.AuditRecord{At: e.At, Actor: e.Actor, Action: e.Action, SubjectKind: e.SubjectKind,
					SubjectID: e.SubjectID, Detail: e.Detail})
			}
			return out, err
		},
	}
	o.MCP.List, o.MCP.Add, o.MCP.Remove = d.mcpList, d.mcpAdd, d.mcpRemove
	o.Usage.GroupBys, o.Usage.Rows = llmusage.GroupBys, d.usageRows
	h := adminapi.NewAPI(o)
	if h == nil {
		return nil
	}
	return h
}
