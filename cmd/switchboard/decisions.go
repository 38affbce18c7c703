package main

import (
	"fmt"
	"slices"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/access"
	"github.com/switchboard-chat/switchboard/bot/approvals"
	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/mcp"
)

// newApprovals makes the approval service. It exists before the router:
// the exec and cron tools ask it, and the router needs the agents that
// use those tools; wireDecisions joins the two.
func newApprovals(d *daemon) *approvals.Service {
	cfg := d.cfg.Approvals
	rules, people := approvals.RulesFromConfig(cfg)
	return approvals.New(approvals.Options{
		Store: d.st.db, Messages: d.st.db, Approvers: cfg.Approvers, Rules: rules, People: people,
		Chat: cfg.Chat, Timeout: cfg.Timeout, Logger: d.log,
	})
}

// wireDecisions hooks the features people decide with buttons into the
// router: approvals (/approvals, /cancel) and access (requests in
// access.mode=request, /revoke, MCP grant requests). allow adds
// identities allowed regardless of access mode, as for the router.
func (d *daemon) wireDecisions(allow []string) error {
	cfg := d.cfg
	rules, people := quorum.FromConfig(cfg.Approvals)
	d.access = access.New(access.Options{
		Requests: d.st.db, Grants: d.st.db, GrantConfig: d.mcpGrants, Messages: d.st.db,
		Admins: cfg.Admins, Allow: slices.Concat(cfg.Access.Allow, allow), AdminChat: cfg.Approvals.Chat,
		Rules: rules, Approvers: cfg.Approvals.Approvers, People: people, ToolInfo: d.mcpToolInfo, Logger: d.log,
	})
	d.approvals.Attach(d.router)
	d.access.Attach(d.router)
	d.router.HandleUnknown(d.access.RequestAccess)
	if err := d.router.Register(append(d.withQuestionCancel(approvals.Commands(d.approvals)), access.Commands(d.access)...)...); err != nil {
		return fmt.Errorf("approvals and access: %w", err)
	}
	for kind, h := range map[string]bot.PressHandler{
		approvals.ButtonKind: d.approvals.Decide, access.RequestButton: d.access.DecideRequestPress, access.GrantButton: d.access.DecideGrantPress,
	} {
		if err := d.router.HandlePresses(kind, h); err != nil {
			return err
		}
	}
	return nil
}

// mcpToolInfo names tool of MCP server as approvals.rules name it (its
// registry name), with its side-effect class and groups, for grant
// requests; a tool not bridged (any more) keeps the server's groups.
func (d *daemon) mcpToolInfo(server, tool string) (name, class string, groups []string) {
	name = mcp.ToolName(server, tool)
	if t, ok := d.tools.Get(name); ok {
		return name, t.SideEffect().String(), tools.GroupsOf(t)
	}
	return name, "", []string{"mcp", "mcp:" + server}
}
