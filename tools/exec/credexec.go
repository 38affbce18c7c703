package exec

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
)

// CredentialedBinary is one CLI credentialed_exec may run: the program at
// Path (an absolute path, nothing found at call time), with Env — its
// credentials — put into that process's environment only.
type CredentialedBinary struct {
	Name     string // what the model names it: gh
	Path     string // /usr/bin/gh
	Env      map[string]string
	DenyArgs []*regexp.Regexp // matched against the arguments joined by spaces
	Timeout  time.Duration    // 0: 30 s
}

// CredentialPresets are the deny lists of well-known CLIs: reading or
// changing credentials, and destructive or interactive commands. A
// configured binary of one of these names gets them on top of its own.
var CredentialPresets = map[string][]string{
	"gh": {`^auth\b`, `\bssh-key\b`, `\bgpg-key\b`, `^secret\b`, `^repo\s+delete\b`, `^extension\b`, `^alias\b`,
		`^config\s+set\b`, `^codespace\s+ssh\b`},
	"gcloud": {`^auth\b`, `^config\s+set\b`, `print-access-token`, `print-identity-token`, `\bkeys\s+create\b`,
		`\bdelete\b`, `\bssh\b`},
	"aws": {`^configure\b`, `^sts\s+get-session-token\b`, `get-secret-value`, `create-access-key`, `\bdelete-`,
		`\bterminate-instances\b`, `^s3\s+rb\b`, `^s3\s+rm\b`, `^ssm\s+start-session\b`},
	"kubectl": {`^config\b`, `^delete\b`, `^exec\b`, `^cp\b`, `^port-forward\b`, `^proxy\b`, `\bsecrets?\b`, `^drain\b`,
		`--token\b`, `--kubeconfig\b`, `^auth\b`},
	"terraform": {`^destroy\b`, `^apply\b`, `-auto-approve\b`, `^state\s+(rm|push|mv)\b`, `^force-unlock\b`, `^import\b`,
		`^taint\b`, `^workspace\s+delete\b`, `^login\b`},
}

// CompileDeny compiles deny patterns, adding the preset of a known CLI.
func CompileDeny(name string, patterns []string) ([]*regexp.Regexp, error) {
	var out []*regexp.Regexp
	for _, p := range append(slices.Clone(CredentialPresets[name]), patterns...) {
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, fmt.Errorf("deny_args %q: %w", p, err)
		}
		out = append(out, re)
	}
	return out, nil
}

// CredentialedExec is the credentialed_exec tool: it runs a configured CLI
// directly (no shell) with its credentials in the environment.
type CredentialedExec struct {
	bins map[string]CredentialedBinary
	exec *Exec
}

// NewCredentialedExec checks each binary: its path must be absolute and
// name an executable file; symlinks are resolved once, now.
func NewCredentialedExec(bins []CredentialedBinary, exec *Exec) (*CredentialedExec, error) {
	c := &CredentialedExec{bins: map[string]CredentialedBinary{}, exec: exec}
	for _, b := range bins {
		if b.Name == "" || strings.ContainsAny(b.Name, `/\ `) {
			return nil, fmt.Errorf("credentialed_exec binary %q: give a bare name like gh", b.Name)
		}
		if !filepath.IsAbs(b.Path) {
			return nil, fmt.Errorf("credentialed_exec %s: path %q must be absolute (which %s)", b.Name, b.Path, b.Name)
		}
		real, err := filepath.EvalSymlinks(b.Path)
		if err != nil {
			return nil, fmt.Errorf("credentialed_exec %s: %w", b.Name, err)
		}
		fi, err := os.Stat(real)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode()&0o111 == 0 {
			return nil, fmt.Errorf("credentialed_exec %s: %s is not an executable file", b.Name, b.Path)
		}
		b.Path = real
		if b.Timeout <= 0 {
			b.Timeout = 30 * time.Second
		}
		c.bins[b.Name] = b
	}
	return c, nil
}

// Name implements Tool.
func (*CredentialedExec) Name() string { return "credentialed_exec" }

// Description implements Tool.
func (c *CredentialedExec) Description() string {
	names := make([]string, 0, len(c.bins))
	for n := range c.bins {
		names = append(names, n)
	}
	sort.Strings(names)
	return "Run a configured CLI with its credentials, without a shell: {binary, args: [..]}. Binaries: " +
		strings.Join(names, ", ") + ". Each argument is passed as is: no pipes, redirections or substitutions."
}

// Parameters implements Tool.
func (*CredentialedExec) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"binary":{"type":"string"},` +
		`"args":{"type":"array","items":{"type":"string"}}},"required":["binary"],"additionalProperties":false}`)
}

// SideEffect implements Tool: it reaches outside services with credentials.
func (*CredentialedExec) SideEffect() tools.SideEffect { return tools.SideEffectNetwork }

// ApprovalKey implements ApprovalKeyed: Always allow covers the exact
// command line.
func (*CredentialedExec) ApprovalKey(raw json.RawMessage) string {
	var a credArgs
	_ = json.Unmarshal(raw, &a)
	return a.Binary + " " + strings.Join(a.Args, " ")
}

type credArgs struct {
	Binary string   `json:"binary"`
	Args   []string `json:"args"`
}

// shellOperators are refused in arguments: nothing here runs a shell, so
// they would only show that the model expects one.
var shellOperators = []string{";", "|", "&&", "||", ">", "<", "$(", "`", "\n"}

// Execute implements Tool.
func (c *CredentialedExec) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a credArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Binary == "" {
		return tools.ErrorResult(`pass {"binary": "gh", "args": ["issue", "list"]}`)
	}
	b, ok := c.bins[a.Binary]
	if !ok {
		names := make([]string, 0, len(c.bins))
		for n := range c.bins {
			names = append(names, n)
		}
		sort.Strings(names)
		return tools.ErrorResult(fmt.Sprintf("%q is not a configured binary (by its bare name); configured: %s", a.Binary, strings.Join(names, ", ")))
	}
	for _, arg := range a.Args {
		for _, op := range shellOperators {
			if strings.Contains(arg, op) {
				return tools.ErrorResult(fmt.Sprintf("argument %q holds the shell operator %q; credentialed_exec runs no shell: pass plain arguments", arg, op))
			}
		}
	}
	line := strings.Join(a.Args, " ")
	for _, re := range b.DenyArgs {
		if re.MatchString(line) {
			return tools.ErrorResult(fmt.Sprintf("refused: %s %s matches the deny rule %q for %s", a.Binary, line, re.String(), a.Binary))
		}
	}
	call, _ := tools.CallFrom(ctx)
	log := c.exec.opts.Logger.With("tool", "credentialed_exec", "binary", a.Binary, "session", call.Session)
	ws, err := c.exec.workspace(call)
	if err != nil {
		return tools.ErrorResult("the workspace is not available: " + err.Error())
	}
	env := make([]string, 0, len(b.Env))
	for k, v := range b.Env {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	// Not sandboxed: a CLI like gh or aws needs the network and its own
	// configuration; it runs without a shell, from its pinned path.
	return c.exec.runArgv(ctx, log, append([]string{b.Path}, a.Args...), ws, ws, b.Timeout, false, env...)
}
