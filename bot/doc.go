// Package bot is the daemon's own logic: the inbound pipeline (dedupe →
// access → rate limit → chat commands → per-session lane → agent), the outbox
// dispatcher that delivers replies, and chat commands. It defines the storage
// interfaces it needs; storage/postgres and storage/redis implement them.
package bot
