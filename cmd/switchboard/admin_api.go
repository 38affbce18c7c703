package main

import (
	"context"
	"net/http"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/jobs"
)

// adminAPI wires /api/v1; nil (off) without http.admin_token.
func (d *daemon) adminAPI() http.Handler {
	o := bot.AdminAPIOptions{
		Token: d.cfg.HTTP.AdminToken, Router: d.router, Approvals: d.approvals, Access: d.st.db, Jobs: jobs.AdminList(d.st.db),
		Sessions: d.st.db, Grants: d.st.db, Logger: d.log,
		Audit: func(ctx context.Context, limit int) ([]bot.AuditRecord, error) {
			entries, err := d.st.db.Audit(ctx, limit)
			out := make([]bot.AuditRecord, 0, len(entries))
			for _, e := range entries {
				out = append(out, bot.AuditRecord{At: e.At, Actor: e.Actor, Action: e.Action, SubjectKind: e.SubjectKind,
					SubjectID: e.SubjectID, Detail: e.Detail})
			}
			return out, err
		},
	}
	o.MCP.List, o.MCP.Add, o.MCP.Remove = d.mcpList, d.mcpAdd, d.mcpRemove
	h := bot.NewAdminAPI(o)
	if h == nil {
		return nil
	}
	return h
}
