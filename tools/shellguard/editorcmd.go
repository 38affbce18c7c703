package shellguard

import "strings"

// editorShells are programs whose command-line commands can run shell
// commands: vim -c '!cmd' (or +'!cmd'), gdb -ex 'shell cmd' (or '!cmd').
var editorShells = map[string][]string{
	"vim": {"-c", "+", "--cmd"}, "vi": {"-c", "+", "--cmd"}, "nvim": {"-c", "+", "--cmd"},
	"ex": {"-c", "+", "--cmd"}, "view": {"-c", "+", "--cmd"}, "vimdiff": {"-c", "+", "--cmd"},
	"gdb": {"-ex", "-iex", "--ex", "--eval-command", "--init-eval-command"},
}

// editorCommands checks the commands given to an editor or debugger on its
// command line and judges the shell commands among them.
func (c *checker) editorCommands(prog string, args []arg, in stdin, depth int) {
	opts := editorShells[prog]
	for i, a := range args {
		if !a.lit {
			continue
		}
		var cmd string
		found := false
		for _, o := range opts {
			switch {
			case a.val == o && o != "+" && i+1 < len(args):
				if !args[i+1].lit {
					c.dynamicCode(prog, args[i+1])
					return
				}
				cmd, found = args[i+1].val, true
			case o == "+" && strings.HasPrefix(a.val, "+") && len(a.val) > 1:
				cmd, found = a.val[1:], true
			case strings.HasPrefix(o, "--") && strings.HasPrefix(a.val, o+"="):
				cmd, found = strings.TrimPrefix(a.val, o+"="), true
			}
		}
		if !found {
			continue
		}
		if shell, ok := editorShellCommand(cmd); ok {
			c.script(shell, depth+1, in)
			if c.verdict != nil {
				return
			}
		}
	}
}

// editorShellCommand returns the shell command in an editor or debugger
// command: "!cmd", ":!cmd", "shell cmd", "sh cmd", "r !cmd", "w !cmd",
// "call system('cmd')".
func editorShellCommand(cmd string) (string, bool) {
	cmd = strings.TrimLeft(strings.TrimSpace(cmd), ":")
	for _, p := range []string{"!", "r !", "r!", "w !", "w!", "shell ", "sh "} {
		if rest, ok := strings.CutPrefix(cmd, p); ok {
			return rest, true
		}
	}
	if i := strings.Index(cmd, "system("); i >= 0 {
		lits := stringLiterals(cmd[i:])
		if len(lits) > 0 {
			return lits[0], true
		}
	}
	if cmd == "shell" || cmd == "sh" {
		return "sh", true
	}
	return "", false
}
