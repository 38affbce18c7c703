// Package scrub removes credentials from text before it leaves the daemon:
// tool results shown to the model and the person, and the log. It knows the
// well-known credential shapes and every secret value it was given, also
// when encoded or spread out. It imports nothing of the daemon, so the
// logger and the tool registry both use it.
package scrub
