// Package contextfiles is the context-files feature: admins see and set in
// chat the files that shape an agent's system prompt (SOUL.md, USER.md, …;
// tools.ContextFiles) with /context.
//
// The files live in the tools.DocStore the agents read them from, so a
// change applies from the next message. The agent changed is the one that
// answers in the admin's chat (Chats, which the Router implements); USER.md
// is the admin's own, in their user scope.
//
// cmd/switchboard passes Commands(Options{…}) to bot.Router.Register.
// Imports flow one way: contextfiles imports bot, channels and tools; bot
// never imports contextfiles.
package contextfiles
