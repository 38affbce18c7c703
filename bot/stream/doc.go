// Package stream shows an agent's answer in its chat while the model
// writes it: the first words as soon as they come, then the whole answer
// so far at most about once a second, the tool steps as a short line at
// its end, and — when the reply is stored — the live messages handed to
// the outbox row that replaces them with the final text
// (channels.LiveAnswerer.FinishLive), so the chat sees the stored reply
// exactly once.
//
// A 429 pauses the chat's updates for as long as the platform says and
// skips the updates due meanwhile; the final text is never skipped (it is
// the outbox's, which waits the 429 out). The live messages are recorded
// in a Store as soon as they exist, so a run that dies mid-answer leaves
// them to the session's next run, which takes them over: a chat never keeps
// a half-written answer.
//
// It is a building block of the run, like bot/progress: package bot
// starts an Answer for each run whose chat can show one. Imports flow one
// way: stream imports agentcore, channels and bot/progress; bot imports
// stream.
package stream
