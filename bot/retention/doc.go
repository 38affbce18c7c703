// Package retention decides how long a chat's conversation is kept and
// what the model still sees of it: /reset (a fresh start: the model no
// longer sees the earlier messages, which are kept), /forget (admins:
// delete a chat's history, memory documents and attachments) and the
// hourly pruning of messages and the audit log older than retention:
// says, each done by one replica in bounded pages.
//
// A conversation is cut only between turns: a turn ends with an assistant
// reply that asks for no tool, so no mark and no prune ever separates a
// tool call from its results, and a session's newest message is never
// pruned.
package retention
