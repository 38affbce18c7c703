package audit

import (
	"fmt"
	"strings"
)

// maxField bounds one field of a line: ids and names come from platforms
// and models, and a line must stay a line.
const maxField = 64

// Line is one entry as /audit shows it:
// "2026-12-02 20:16 · telegram:1001 · approval.decided approval:ab12 → allowed".
// Every field is escaped: actors, subjects and outcomes may carry text
// chosen by strangers (a display name, a tool's argument).
func Line(e Entry) string {
	what := escape(e.Action)
	if e.SubjectKind != "" || e.SubjectID != "" {
		what += " " + escape(e.SubjectKind+":"+e.SubjectID)
	}
	line := fmt.Sprintf("%s · %s · %s", e.At.UTC().Format("2006-01-02 15:04"), escape(e.Actor), what)
	if o := outcome(e.Detail); o != "" {
		line += " → " + escape(o)
	}
	return line
}

// outcome is what a decision came to: the detail's status when it has one,
// else the facts the action recorded (a model's name, counts deleted).
func outcome(detail map[string]any) string {
	if s, ok := detail["status"].(string); ok && s != "" {
		return s
	}
	for _, k := range []string{"model", "outcome"} {
		if s, ok := detail[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// escape keeps s from injecting Markdown or new lines into the reply, and
// shortens it to maxField characters.
func escape(s string) string {
	var b strings.Builder
	n := 0
	for _, c := range s {
		if n == maxField {
			b.WriteRune('…')
			break
		}
		n++
		switch c {
		case '*', '_', '`', '[', ']', '(', ')', '~', '>', '#', '|', '\\', '<', '&':
			b.WriteRune('\\')
			b.WriteRune(c)
		case '\n', '\r', '\t':
			b.WriteRune(' ')
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}
