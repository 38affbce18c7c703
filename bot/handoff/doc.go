// Package handoff hands a chat's conversation from one agent to another
// for a while: the handoff tool and /handoff set the route, and the
// Router asks the Service who answers in a chat (bot.Options.Route). A
// route lives in Redis with a durable copy in PostgreSQL; the stores in
// storage/redis and storage/postgres implement RouteCache and RouteStore.
package handoff
