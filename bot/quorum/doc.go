// Package quorum is the two-person rule shared by every decision people
// make with buttons (tool approvals, MCP grant requests): the rules of
// approvals.rules and what they match, who counts as one person across
// platforms (approvals.people), who may vote on a request, and how its
// votes so far are tallied and shown. It is pure logic; each feature
// stores its requests and, through one votes table, their votes.
package quorum
