// Package progress shows, in its chat, that an agent run is working, and
// keeps the run's session lock alive meanwhile: nothing for a quick
// answer, "typing…" once a run goes on for a second, and a "⏳ working…"
// note after two seconds, edited in place with each tool step and deleted
// at the end (on channels that can edit messages).
//
// It is a building block of the run, not a feature: package bot starts a
// Display for every run (Start) and reports the agent's tool steps to it.
// It sees the chat only through the channel adapter's optional interfaces
// (channels.Typer, channels.Editor, channels.Deleter) and the lock only
// through Lock.
//
// Imports flow one way: progress imports agentcore and channels; bot
// imports progress, and progress never imports bot.
package progress
