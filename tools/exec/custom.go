package exec

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/switchboard-chat/switchboard/tools"
)

// CustomSpec defines a custom tool: a shell command template whose
// {{.name}} placeholders are filled with the call's arguments, each one
// shell-quoted, so a value is always one literal word — quotes, $(…),
// backticks, newlines and all. (A value can still start with "-"; put --
// before placeholders where the program takes options.)
type CustomSpec struct {
	Name        string
	Description string
	Parameters  json.RawMessage // JSON schema of the arguments (an object)
	Command     string
	Timeout     time.Duration     // 0: 30 s
	Env         map[string]string // added to the command's environment
}

// CommandRunner runs a rendered command for a session (Exec implements it).
type CommandRunner interface {
	RunRendered(ctx context.Context, tool, command string, env []string, timeout time.Duration) tools.Result
}

// Custom is a custom tool.
type Custom struct {
	spec   CustomSpec
	schema *jsonschema.Resolved
	keys   []string // the placeholders the template uses
	run    CommandRunner
}

// customNameRE is what a custom tool may be called.
var customNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// placeholderRE finds {{.name}} placeholders.
var placeholderRE = regexp.MustCompile(`{{\s*\.([A-Za-z_][A-Za-z0-9_]*)\s*}}`)

// NewCustom checks spec and returns the tool. The template may only hold
// plain {{.name}} placeholders (no functions, pipelines or conditions),
// each a property of the parameters schema.
func NewCustom(spec CustomSpec, run CommandRunner) (*Custom, error) {
	if !customNameRE.MatchString(spec.Name) {
		return nil, fmt.Errorf("custom tool name %q: use a-z, 0-9 and _, starting with a letter", spec.Name)
	}
	if len(spec.Parameters) == 0 {
		spec.Parameters = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(spec.Parameters, &schema); err != nil || schema.Type != "object" {
		return nil, fmt.Errorf("custom tool %s: parameters must be a JSON schema of type object", spec.Name)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return nil, fmt.Errorf("custom tool %s: parameters: %w", spec.Name, err)
	}
	// Only {{.name}}: strip them and no action may remain.
	if rest := placeholderRE.ReplaceAllString(spec.Command, ""); bytes.Contains([]byte(rest), []byte("{{")) {
		return nil, fmt.Errorf("custom tool %s: the command may only hold {{.name}} placeholders", spec.Name)
	}
	var keys []string
	for _, m := range placeholderRE.FindAllStringSubmatch(spec.Command, -1) {
		if _, ok := schema.Properties[m[1]]; !ok {
			return nil, fmt.Errorf("custom tool %s: placeholder {{.%s}} is not a property of parameters", spec.Name, m[1])
		}
		if !slices.Contains(keys, m[1]) {
			keys = append(keys, m[1])
		}
	}
	if spec.Timeout <= 0 {
		spec.Timeout = 30 * time.Second
	}
	return &Custom{spec: spec, schema: resolved, keys: keys, run: run}, nil
}

// Name implements Tool.
func (c *Custom) Name() string { return c.spec.Name }

// Description implements Tool.
func (c *Custom) Description() string { return c.spec.Description }

// Parameters implements Tool.
func (c *Custom) Parameters() json.RawMessage { return c.spec.Parameters }

// SideEffect implements Tool: it runs a program, like exec.
func (c *Custom) SideEffect() tools.SideEffect { return tools.SideEffectNetwork }

// Groups implements Grouped.
func (c *Custom) Groups() []string { return []string{"custom"} }

// Spec returns the tool's definition.
func (c *Custom) Spec() CustomSpec { return c.spec }

// Render checks args against the schema and fills the template, each
// value shell-quoted; a placeholder with no value renders as ”.
func (c *Custom) Render(args json.RawMessage) (string, error) {
	var inst any
	if err := json.Unmarshal(args, &inst); err != nil {
		return "", fmt.Errorf("arguments are not JSON")
	}
	if err := c.schema.Validate(inst); err != nil {
		return "", fmt.Errorf("arguments do not match the schema: %v", err)
	}
	obj, _ := inst.(map[string]any)
	data := make(map[string]string, len(c.keys))
	for _, k := range c.keys {
		v := scalar(obj[k])
		if strings.ContainsRune(v, 0) {
			return "", fmt.Errorf("argument %s cannot be passed to a program (it holds a NUL byte)", k)
		}
		data[k] = shellQuote(v)
	}
	// Plain substitution (not text/template: only {{.name}} is allowed, and
	// the template package's reflection would keep the linker from
	// dropping unused methods across the whole binary).
	return placeholderRE.ReplaceAllStringFunc(c.spec.Command, func(m string) string {
		return data[placeholderRE.FindStringSubmatch(m)[1]]
	}), nil
}

// shellQuote makes s one literal word for a POSIX shell (exec runs
// /bin/sh): single quotes, each ' inside written as '\”. Every byte but
// NUL survives, newlines included (mvdan.cc/sh's Quote cannot write a
// newline for POSIX shells, only with bash's $'…').
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// scalar renders a JSON value as one word's text: strings as they are,
// numbers and booleans as JSON writes them, anything else as JSON.
func scalar(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case bool:
		return strconv.FormatBool(v)
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// Execute implements Tool.
func (c *Custom) Execute(ctx context.Context, args json.RawMessage) tools.Result {
	cmd, err := c.Render(args)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}
	env := make([]string, 0, len(c.spec.Env))
	for k, v := range c.spec.Env {
		env = append(env, k+"="+v)
	}
	slices.Sort(env)
	return c.run.RunRendered(ctx, c.spec.Name, cmd, env, c.spec.Timeout)
}
