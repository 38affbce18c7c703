package exec_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools/exec"
	"github.com/switchboard-chat/switchboard/tools/toolstest"
)

// hostileValues must each reach the program as one literal argument.
var hostileValues = []string{
	`plain`,
	`it's`,
	`"double" quotes`,
	`$(touch pwned)`,
	"`touch pwned`",
	"a; touch pwned",
	"a && touch pwned",
	"line one\nline two",
	"-rf",
	"--output=/etc/passwd",
	`$HOME ${PATH} $0`,
	`*`,
	`\`,
	`a|b>c<d`,
	"tab\there",
	" leading and trailing ",
	"",
	"ünïcödé ✓",
	`'; touch pwned; echo '`,
}

// TestCustomToolHostileArguments: every hostile value is rendered
// shell-quoted and arrives at the program byte for byte as one argument;
// nothing it says is run.
func TestCustomToolHostileArguments(t *testing.T) {
	root := t.TempDir()
	ws := workspaceOf(t, root)
	run := exec.New(exec.Options{Logger: discard, WorkspaceRoot: root, Mode: exec.ExecModeAllow})
	tool, err := exec.NewCustom(exec.CustomSpec{
		Name: "show", Description: "prints its argument",
		Parameters: json.RawMessage(`{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}`),
		Command:    `set -- {{.value}}; printf '[%s]#%s' "$1" "$#"`,
	}, run)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range hostileValues {
		args, _ := json.Marshal(map[string]string{"value": v})
		rendered, err := tool.Render(args)
		if err != nil {
			t.Fatalf("Render(%q): %v", v, err)
		}
		res := tool.Execute(toolstest.Context(), args)
		want := "[" + v + "]#1"
		if res.IsError || !strings.HasPrefix(res.ForLLM, want) {
			t.Errorf("value %q rendered %q gave %q; want it literally, as one argument (%q)", v, rendered, res.ForLLM, want)
		}
	}
	if _, err := os.Stat(filepath.Join(ws, "pwned")); err == nil {
		t.Fatal("a hostile value ran a command")
	}
}

func TestCustomToolChecks(t *testing.T) {
	run := exec.New(exec.Options{Logger: discard, WorkspaceRoot: t.TempDir(), Mode: exec.ExecModeAllow})
	params := json.RawMessage(`{"type":"object","properties":{"domain":{"type":"string","maxLength":20},"n":{"type":"integer"}},"required":["domain"]}`)
	for _, bad := range []exec.CustomSpec{
		{Name: "Bad-Name", Command: "true"},
		{Name: "x", Command: "dig {{.missing}}", Parameters: params},
		{Name: "x", Command: `dig {{printf "%s" .domain}}`, Parameters: params},
		{Name: "x", Command: "dig {{if .domain}}x{{end}}", Parameters: params},
		{Name: "x", Command: "true", Parameters: json.RawMessage(`{"type":"array"}`)},
	} {
		if _, err := exec.NewCustom(bad, run); err == nil {
			t.Errorf("NewCustom accepted %+v", bad)
		}
	}
	tool, err := exec.NewCustom(exec.CustomSpec{Name: "lookup", Command: "printf '%s|%s' {{.domain}} {{ .n }}", Parameters: params,
		Env: map[string]string{"Lookup_Token": "tok-xyz"}}, run)
	if err != nil {
		t.Fatal(err)
	}
	for args, want := range map[string]string{
		`{"n": 3}`: "do not match the schema",
		`{"domain": "aaaaaaaaaaaaaaaaaaaaaaaaa"}`: "do not match the schema",
		`{"domain": "example.com", "n": 3}`:       "example.com|3",
		`{"domain": "example.com"}`:               "example.com|\n",
	} {
		if got := tool.Execute(toolstest.Context(), json.RawMessage(args)); !strings.Contains(got.ForLLM, want) {
			t.Errorf("%s → %q; want %q", args, got.ForLLM, want)
		}
	}
	// The exec guard judges the rendered command.
	rm, _ := exec.NewCustom(exec.CustomSpec{Name: "wipe", Command: "rm -rf / {{.domain}}", Parameters: params}, run)
	if got := rm.Execute(toolstest.Context(), json.RawMessage(`{"domain":"x"}`)); !got.IsError || !strings.Contains(got.ForLLM, "blocked by safety policy") {
		t.Errorf("a blocked rendered command ran: %q", got.ForLLM)
	}
	// Its env reaches the command.
	env, _ := exec.NewCustom(exec.CustomSpec{Name: "envy", Command: `printf '%s' "$Lookup_Token" {{.domain}}`, Parameters: params,
		Env: map[string]string{"Lookup_Token": "tok-xyz"}}, run)
	if got := env.Execute(toolstest.Context(), json.RawMessage(`{"domain":""}`)); !strings.HasPrefix(got.ForLLM, "tok-xyz") {
		t.Errorf("env not passed: %q", got.ForLLM)
	}
}
