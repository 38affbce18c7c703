// Package subagents lets an agent spawn subagents: copies of itself with
// fewer tools, each on one task in a session of its own, whose results come
// back to the spawning session. The Service serves the spawn tool
// (tools.Spawner) and owns the subagent sessions' runs (bot.SessionOwner).
//
// A subagent is a copy of the spawning agent with fewer tools
// (tools.SubagentDeny, and tools.LeafDeny at the deepest level allowed)
// working on one task in its own session, scope sub:<id>:<parent session>.
// It runs on the lanes like any session, so approvals park and resume it,
// and recovery continues it after a crash on any replica. Its final reply
// is announced to the parent session as a message (several finishing
// together wake the parent once), or handed straight back to a parent that
// waits (spawn run). The running count is kept in Redis with leases, so
// the limit holds across replicas and a dead replica's runs stop counting.
package subagents
