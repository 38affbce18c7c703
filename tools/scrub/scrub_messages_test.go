package scrub_test

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools/scrub"
)

// messageSources are the files whose messages reach people: config's
// problems, doctor's advice and the Telegram channel's hints.
var messageSources = []string{"../../config/*.go", "../../cmd/switchboard/*.go", "../../channels/*.go", "../../channels/*/*.go",
	"../../storage/*/*.go", "../../agentcore/*.go", "../../bot/*.go", "../../tools/*.go", "../../tools/*/*.go"}

// messageCalls are the functions whose string arguments are messages;
// formats marks those that take a format.
var messageCalls = map[string]bool{"add": true, "Errorf": true, "Sprintf": true, "New": false, "doctorWarning": false}

// TestScrubLeavesTheDaemonsOwnMessagesAlone: every message the daemon
// writes itself (config problems, doctor's hints, "check telegram.token")
// comes through the scrubber unchanged, with its verbs filled with a
// harmless value. The messages are read from the source, so a new one is
// covered without listing it.
func TestScrubLeavesTheDaemonsOwnMessagesAlone(t *testing.T) {
	s := scrub.New("a-configured-secret-value")
	msgs := daemonMessages(t)
	if len(msgs) < 100 {
		t.Fatalf("found %d messages in %v, want the daemon's hundreds: is the parsing broken?", len(msgs), messageSources)
	}
	t.Logf("%d messages", len(msgs))
	for _, m := range msgs {
		if got := s.Scrub(m.text); got != m.text {
			t.Errorf("%s: scrubbed\n  %q\nto\n  %q", m.pos, m.text, got)
		}
	}
}

// message is one message found in the source, its verbs filled.
type message struct {
	pos  string
	text string
}

// daemonMessages parses messageSources and returns the string arguments of
// every messageCalls call, and every Hint field.
func daemonMessages(t *testing.T) []message {
	t.Helper()
	fset := token.NewFileSet()
	var out []message
	for _, glob := range messageSources {
		files, err := filepath.Glob(glob)
		if err != nil || len(files) == 0 {
			t.Fatalf("no files match %s (%v)", glob, err)
		}
		for _, file := range files {
			if strings.HasSuffix(file, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, file, nil, 0)
			if err != nil {
				t.Fatalf("parse %s: %v", file, err)
			}
			ast.Inspect(f, func(n ast.Node) bool {
				for _, text := range messagesIn(n) {
					out = append(out, message{fset.Position(n.Pos()).String(), text})
				}
				return true
			})
		}
	}
	return out
}

// messagesIn returns the messages n writes: a call's string arguments (the
// format filled) or a Hint field's value.
func messagesIn(n ast.Node) []string {
	switch n := n.(type) {
	case *ast.KeyValueExpr:
		if k, ok := n.Key.(*ast.Ident); ok && k.Name == "Hint" {
			if text, ok := render(n.Value); ok {
				return []string{text}
			}
		}
	case *ast.CallExpr:
		name := ""
		switch fn := n.Fun.(type) {
		case *ast.Ident:
			name = fn.Name
		case *ast.SelectorExpr:
			name = fn.Sel.Name
		}
		formats, ok := messageCalls[name]
		if !ok || len(n.Args) == 0 {
			return nil
		}
		if formats {
			if format, ok := render(n.Args[0]); ok {
				return []string{fillVerbs(format)}
			}
			return nil
		}
		var out []string
		for _, a := range n.Args {
			if text, ok := render(a); ok {
				out = append(out, text)
			}
		}
		return out
	}
	return nil
}

// harmless stands for whatever a message's non-literal parts hold.
const harmless = "example value"

// render returns e's text when it is a string literal or a concatenation
// with at least one literal, its other parts as harmless.
func render(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		l, lok := render(e.X)
		r, rok := render(e.Y)
		if !lok && !rok {
			return "", false
		}
		if !lok {
			l = harmless
		}
		if !rok {
			r = harmless
		}
		return l + r, true
	case *ast.ParenExpr:
		return render(e.X)
	}
	return "", false
}

// fillVerbs formats format with a harmless value for each verb: a number
// for %d, an error for %w, text for the rest.
func fillVerbs(format string) string {
	var args []any
	for i := 0; i < len(format); i++ {
		if format[i] != '%' {
			continue
		}
		j := i + 1
		for j < len(format) && strings.IndexByte("+-# 0123456789.*", format[j]) >= 0 {
			j++
		}
		if j >= len(format) {
			break
		}
		switch format[j] {
		case '%':
		case 'd', 'x', 'o', 'b', 'c':
			args = append(args, 3)
		case 'f', 'g', 'e':
			args = append(args, 1.5)
		case 'w':
			args = append(args, errors.New(harmless))
		default:
			args = append(args, harmless)
		}
		i = j
	}
	// Errorf, not Sprintf: it fills %w too.
	return fmt.Errorf(format, args...).Error()
}
