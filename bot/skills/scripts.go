package skills

import (
	"fmt"
	"path"
	"strings"

	"github.com/switchboard-chat/switchboard/tools/shellguard"
)

// maxFindings bounds the script findings shown to the approvers.
const maxFindings = 20

// finding is one thing the approvers must know about a skill's scripts.
type finding struct {
	what string // for the card's warnings: never quotes the script
	line string // "path:N: text" for the card's code block; "" for none
}

// scriptFindings are what the approvers must know about s's scripts:
// every line of a shell script the shell guard blocks or flags, a shell
// script it blocks or cannot read as a whole, and programs in other
// languages it does not read.
func scriptFindings(s Skill) []finding {
	var out []finding
	for _, f := range s.Files {
		lang := scriptLanguage(f)
		switch {
		case lang == "":
		case lang != "sh":
			out = append(out, finding{what: fmt.Sprintf("%s is a %s program; the shell guard does not read it, so read it yourself before you publish", f.Path, lang)})
		default:
			out = append(out, shellFindings(f)...)
		}
	}
	if len(out) > maxFindings {
		out = append(out[:maxFindings], finding{what: fmt.Sprintf("and %d more findings like these", len(out)-maxFindings)})
	}
	return out
}

// scriptWarnings are the findings' warnings, for the approval request:
// a request with any offers no "Always allow".
func scriptWarnings(fs []finding) []string {
	out := make([]string, 0, len(fs))
	for _, f := range fs {
		out = append(out, f.what)
	}
	return out
}

// shellFindings checks a shell script line by line, then as a whole.
func shellFindings(f File) []finding {
	var out []finding
	text := string(f.Data)
	for i, line := range strings.Split(text, "\n") {
		l := strings.TrimSpace(line)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		v, _ := shellguard.CheckCommand(l)
		at := fmt.Sprintf("%s:%d: %s", f.Path, i+1, clip(l, 200))
		switch {
		case v.Blocked && v.Category != shellguard.CategoryUnparseable:
			out = append(out, finding{what: fmt.Sprintf("%s line %d is blocked by the shell guard (%s)", f.Path, i+1, v.Category), line: at})
		case v.Dangerous():
			out = append(out, finding{what: fmt.Sprintf("%s line %d is flagged by the shell guard (%s)", f.Path, i+1, strings.Join(v.Warnings, "; ")), line: at})
		}
	}
	if len(out) > 0 {
		return out
	}
	v, _ := shellguard.CheckCommand(text)
	switch {
	case v.Blocked && v.Category == shellguard.CategoryUnparseable:
		return []finding{{what: f.Path + " cannot be read by the shell guard (" + v.Reason + "); read it yourself before you publish"}}
	case v.Blocked:
		return []finding{{what: fmt.Sprintf("%s is blocked by the shell guard as a whole (%s)", f.Path, v.Category)}}
	case v.Dangerous():
		return []finding{{what: fmt.Sprintf("%s is flagged by the shell guard: %s", f.Path, strings.Join(v.Warnings, "; "))}}
	}
	return nil
}

// scriptLanguage names the language of f when it is a script: "sh" for
// shell, else the interpreter of its #! line or its extension; "" for
// other files.
func scriptLanguage(f File) string {
	if first, _, _ := strings.Cut(string(f.Data), "\n"); strings.HasPrefix(first, "#!") {
		fields := strings.Fields(strings.TrimPrefix(first, "#!"))
		if len(fields) > 0 {
			prog := path.Base(fields[0])
			if prog == "env" && len(fields) > 1 {
				prog = path.Base(fields[len(fields)-1])
			}
			if isShell(prog) {
				return "sh"
			}
			return clip(prog, 40)
		}
	}
	switch path.Ext(f.Path) {
	case ".sh", ".bash", ".zsh", ".ksh":
		return "sh"
	case ".py":
		return "python"
	case ".js", ".mjs", ".ts":
		return "javascript"
	case ".rb":
		return "ruby"
	case ".pl":
		return "perl"
	}
	return ""
}

// isShell reports whether prog is a shell the guard reads.
func isShell(prog string) bool {
	switch prog {
	case "sh", "bash", "dash", "zsh", "ksh", "ash":
		return true
	}
	return false
}
