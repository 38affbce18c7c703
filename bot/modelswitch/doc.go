// Package modelswitch lets admins switch a chat to another configured
// model with /model: the choice is kept in a Store (PostgreSQL), read at
// the start of every run through Switch.ModelFor, so it holds on every
// replica and across restarts.
package modelswitch
