// Package exec is the tool family that runs programs for an agent: exec
// (shell commands in the session's workspace, asked about through the
// approval gate and the shell guard), process (background processes),
// the sandbox they run in, custom tools (commands an operator defines)
// and credentialed_exec (commands that get a secret the model never sees).
// Workspaces, the per-session directories, live here too; the fs tools
// work in the same ones.
package exec
