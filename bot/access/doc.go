// Package access lets people in and lets them use MCP servers' tools, on
// an admin's decision. It owns access requests (what access.mode=request
// does for a message from an unknown person: one request per person, the
// admins asked with buttons, the person told the outcome), /revoke, and
// MCP tool grants (CheckGrant, which files a grant request the first time
// a tool is lacking; one admin decides it, or, when approvals.rules match
// the tool, the rule's quorum of approvers, counted as bot/quorum says).
// The check of each inbound message against the allowlist is the
// pipeline's (bot.Router); this package decides what the pipeline asks it.
package access
