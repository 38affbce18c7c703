package exec

import (
	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/shellguard"

	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
)

// The exec approval modes (config exec.approval).
const (
	ExecModeAsk   = "ask"   // every command not always-allowed needs an approver's yes
	ExecModeAllow = "allow" // commands run without asking (blocked ones still never run)
	ExecModeDeny  = "deny"  // exec is disabled
)

// Exec limits and defaults.
const (
	DefaultExecTimeout   = 60 * time.Second
	MaxExecTimeout       = 10 * time.Minute
	DefaultExecMaxOutput = 64 << 10
	DefaultExecShell     = "/bin/sh"
)

// Options configures the exec tool. Every field but WorkspaceRoot is
// optional.
type Options struct {
	// WorkspaceRoot holds one directory per session (see WorkspaceDir);
	// commands run there.
	WorkspaceRoot string
	// Mode is ExecModeAsk (default), ExecModeAllow or ExecModeDeny.
	Mode string
	// Approver decides commands in ask mode.
	Approver tools.Approver
	// Timeout is the default run time limit (default 60s, at most 10m);
	// a call may ask for another one up to 10m.
	Timeout time.Duration
	// MaxOutput caps the captured output in bytes (default 64 KiB).
	MaxOutput int
	// Shell runs the command as `Shell -c command` (default /bin/sh).
	Shell string
	// Env is the complete child environment. Default: PATH, LANG and
	// HOME=<workspace> only; the daemon's own environment (and its secrets)
	// is never passed on. HOME is added when missing.
	Env []string
	// Sandbox, when set, runs commands (exec, custom tools, background
	// processes) inside bubblewrap.
	Sandbox *Sandbox
	// RunAs, when set, is the account commands run as (the daemon must be
	// root to switch); each session's workspace is created owned by it.
	// Nil runs commands as the daemon's own user.
	RunAs *ExecUser
	// PerUser reports whether an agent's workspaces are per person (open
	// agents), as in Workspaces.
	PerUser func(agent string) bool
	// Logger receives blocked and finished commands (never their text).
	// Nil discards them.
	Logger *slog.Logger
}

// Exec is the "exec" tool: it runs a shell command in the session's
// workspace after the shell guard and, in ask mode, the approvers agreed.
// It is not a sandbox: an approved command can do whatever its user (the
// daemon's, or Options.RunAs) can.
type Exec struct {
	opts Options
}

// New returns the exec tool with defaults filled in.
func New(o Options) *Exec {
	if o.Mode == "" {
		o.Mode = ExecModeAsk
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultExecTimeout
	}
	o.Timeout = min(o.Timeout, MaxExecTimeout)
	if o.MaxOutput <= 0 {
		o.MaxOutput = DefaultExecMaxOutput
	}
	if o.Shell == "" {
		o.Shell = DefaultExecShell
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Exec{opts: o}
}

// Name implements Tool.
func (*Exec) Name() string { return "exec" }

// Description implements Tool.
func (e *Exec) Description() string {
	return "Run a shell command (" + e.opts.Shell + " -c) in this conversation's workspace directory and return its " +
		"combined stdout/stderr and exit status. Stdin is empty, so interactive programs will not work. " +
		"Commands may wait for a human's approval; destructive commands are refused."
}

// Parameters implements Tool.
func (e *Exec) Parameters() json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{`+
		`"command":{"type":"string","description":"The shell command to run."},`+
		`"cwd":{"type":"string","description":"Working directory relative to the workspace (default: the workspace itself)."},`+
		`"timeout":{"type":"integer","minimum":1,"maximum":%d,"description":"Time limit in seconds (default %d)."}},`+
		`"required":["command"],"additionalProperties":false}`,
		int(MaxExecTimeout/time.Second), int(e.opts.Timeout/time.Second)))
}

// ApprovesItself implements SelfApproving: exec asks per command.
func (*Exec) ApprovesItself() {}

// SideEffect implements Tool: exec runs arbitrary programs.
func (*Exec) SideEffect() tools.SideEffect { return tools.SideEffectNetwork }

// execArgs are the tool's arguments.
type execArgs struct {
	Command *string  `json:"command"`
	Cwd     string   `json:"cwd"`
	Timeout *float64 `json:"timeout"`
}

// Execute implements Tool.
func (e *Exec) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a execArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return tools.ErrorResult(`invalid arguments: pass {"command": "...", "cwd"?: "...", "timeout"?: seconds}`)
	}
	if a.Command == nil || strings.TrimSpace(*a.Command) == "" {
		return tools.ErrorResult(`missing "command": pass the shell command to run`)
	}
	command := *a.Command
	timeout := e.opts.Timeout
	if a.Timeout != nil {
		t := *a.Timeout
		if math.IsNaN(t) || t < 1 {
			return tools.ErrorResult(fmt.Sprintf(`"timeout" must be a number of seconds between 1 and %d`, int(MaxExecTimeout/time.Second)))
		}
		timeout = min(time.Duration(math.Ceil(min(t, MaxExecTimeout.Seconds())))*time.Second, MaxExecTimeout)
	}
	call, _ := tools.CallFrom(ctx)
	log := e.opts.Logger.With("tool", "exec", "session", call.Session)

	verdict, _ := shellguard.CheckCommand(command)
	if verdict.Blocked {
		log.Warn("exec blocked", "category", verdict.Category, "reason", verdict.Reason)
		return tools.ErrorResult("blocked by safety policy: " + verdict.Category)
	}
	switch e.opts.Mode {
	case ExecModeDeny:
		return tools.ErrorResult("exec is disabled (exec.approval=deny)")
	case ExecModeAsk, ExecModeAllow:
	default:
		return tools.ErrorResult("exec is misconfigured: exec.approval must be ask, allow or deny; ask an admin to fix it")
	}

	ws, err := e.workspace(call)
	if err != nil {
		log.Error("exec workspace", "error", err)
		return tools.ErrorResult("the workspace is not available: " + err.Error())
	}
	dir, rel, err := resolveCwd(ws, a.Cwd)
	if err != nil {
		return tools.ErrorResult(err.Error())
	}

	// A dangerous command is asked even in allow mode: the guard found a
	// reason a human must look at it.
	if e.opts.Mode == ExecModeAsk || verdict.Dangerous() {
		if verdict.Dangerous() {
			log.Info("exec flagged dangerous", "warnings", len(verdict.Warnings))
		}
		if res, ok := e.approve(ctx, log, call, command, rel, verdict.Warnings); !ok {
			return res
		}
	}
	return e.run(ctx, log, command, dir, ws, timeout)
}

// approve asks the approvers unless the command is always-allowed. ok is
// false when the command must not run (now); res then says why or parks.
func (e *Exec) approve(ctx context.Context, log *slog.Logger, call tools.Call, command, cwd string, warnings []string) (res tools.Result, ok bool) {
	if e.opts.Approver == nil {
		if len(warnings) > 0 {
			return tools.ErrorResult("this command needs an approver (" + strings.Join(warnings, "; ") +
				") and none is configured; ask an admin to set approvers"), false
		}
		return tools.ErrorResult(tools.ErrNoApprover.Error() + "; ask an admin to configure approvers or change exec.approval"), false
	}
	pattern, err := shellguard.NormalizeCommand(command)
	if err != nil {
		// CheckCommand already parsed it; this is not expected.
		return tools.ErrorResult("blocked by safety policy: " + shellguard.CategoryUnparseable), false
	}
	return tools.AskApproval(ctx, log, e.opts.Approver, tools.ApprovalRequest{
		Tool: "exec", Command: command, Cwd: cwd, Pattern: pattern, Call: call, Warnings: warnings,
		Class: e.SideEffect().String(), Groups: tools.GroupsOf(e),
	}, "command")
}

// RunRendered runs a command rendered by a custom tool, in the calling
// session's workspace, as exec would, with env added to its environment.
// The exec guard applies to the rendered command: one it blocks or flags
// dangerous is refused (its values came from the model).
func (e *Exec) RunRendered(ctx context.Context, tool, command string, env []string, timeout time.Duration) tools.Result {
	call, _ := tools.CallFrom(ctx)
	log := e.opts.Logger.With("tool", tool, "session", call.Session)
	verdict, _ := shellguard.CheckCommand(command)
	if verdict.Blocked {
		log.Warn("custom tool command blocked", "category", verdict.Category, "reason", verdict.Reason)
		return tools.ErrorResult("blocked by safety policy: " + verdict.Category)
	}
	if verdict.Dangerous() {
		log.Warn("custom tool command flagged dangerous", "warnings", len(verdict.Warnings))
		return tools.ErrorResult("refused: the rendered command looks dangerous (" + strings.Join(verdict.Warnings, "; ") + ")")
	}
	if e.opts.Mode == ExecModeDeny {
		return tools.ErrorResult("commands are disabled here (exec.approval=deny)")
	}
	ws, err := e.workspace(call)
	if err != nil {
		log.Error("custom tool workspace", "error", err)
		return tools.ErrorResult("the workspace is not available: " + err.Error())
	}
	return e.run(ctx, log, command, ws, ws, min(timeout, MaxExecTimeout), env...)
}
