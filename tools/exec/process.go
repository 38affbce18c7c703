package exec

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/tools"
	"github.com/switchboard-chat/switchboard/tools/shellguard"
)

// Background process limits.
const (
	maxProcsPerSession = 4
	processRing        = 64 << 10 // newest output kept per process
	processMaxRuntime  = time.Hour
)

// Processes is the process tool: background commands of a session that
// outlive one tool call (a dev server, a long build). Each runs in its own
// process group in the session's workspace, like exec; only the newest
// 64 KiB of its output are kept; it is killed with its group on stop,
// after an hour, or when the daemon exits (Close). Processes live on the
// replica that started them.
type Processes struct {
	exec *Exec

	mu     sync.Mutex
	procs  map[string]*process
	closed bool
}

type process struct {
	id, session, command string
	started              time.Time
	pgid                 int
	out                  *ring
	done                 chan struct{}
	status               string // set when done
}

// NewProcesses returns the process tool, running commands as exec does.
func NewProcesses(e *Exec) *Processes { return &Processes{exec: e, procs: map[string]*process{}} }

// Name implements Tool.
func (*Processes) Name() string { return "process" }

// Description implements Tool.
func (*Processes) Description() string {
	return "Background commands that keep running between calls. action: start {command} returns an id; output {id} " +
		"shows the newest output and whether it still runs; stop {id}; list."
}

// Parameters implements Tool.
func (*Processes) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"action":{"type":"string","enum":["start","output","stop","list"]},` +
		`"command":{"type":"string"},"id":{"type":"string"}},"required":["action"],"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (*Processes) SideEffect() tools.SideEffect { return tools.SideEffectSpawns }

// ApprovalKey implements ApprovalKeyed: Always allow covers one command.
func (*Processes) ApprovalKey(raw json.RawMessage) string {
	var a struct{ Action, Command string }
	_ = json.Unmarshal(raw, &a)
	if a.Action != "start" {
		return a.Action // output, stop and list are asked (or allowed) as one
	}
	if p, err := shellguard.NormalizeCommand(a.Command); err == nil {
		return "start " + p
	}
	return "start " + a.Command
}

// Execute implements Tool.
func (p *Processes) Execute(ctx context.Context, raw json.RawMessage) tools.Result {
	var a struct{ Action, Command, ID string }
	if err := json.Unmarshal(raw, &a); err != nil || a.Action == "" {
		return tools.ErrorResult(`pass {"action": "start", "command": "..."}, {"action": "output"|"stop", "id": "..."} or {"action": "list"}`)
	}
	call, _ := tools.CallFrom(ctx)
	switch a.Action {
	case "start":
		return p.start(call, a.Command)
	case "list":
		return p.list(call)
	case "output", "stop":
		pr := p.get(call, a.ID)
		if pr == nil {
			return tools.ErrorResult(fmt.Sprintf("no process %q in this conversation on this replica (list shows yours)", a.ID))
		}
		if a.Action == "stop" {
			killGroup(pr.pgid)
			select {
			case <-pr.done:
			case <-time.After(5 * time.Second):
			}
		}
		return tools.Result{ForLLM: pr.describe() + "\n" + pr.out.String()}
	}
	return tools.ErrorResult("unknown action " + a.Action)
}

func (p *Processes) start(call tools.Call, command string) tools.Result {
	if strings.TrimSpace(command) == "" {
		return tools.ErrorResult(`pass "command"`)
	}
	verdict, _ := shellguard.CheckCommand(command)
	switch {
	case verdict.Blocked:
		return tools.ErrorResult("blocked by safety policy: " + verdict.Category)
	case verdict.Dangerous():
		return tools.ErrorResult("refused in the background: " + strings.Join(verdict.Warnings, "; ") + ". Run it with exec, where an admin sees the warning.")
	case p.exec.opts.Mode == ExecModeDeny:
		return tools.ErrorResult("commands are disabled here (exec.approval=deny)")
	}
	ws, err := p.exec.workspace(call)
	if err != nil {
		return tools.ErrorResult("the workspace is not available: " + err.Error())
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return tools.ErrorResult("shutting down; start it again in a moment")
	}
	running := 0
	for _, pr := range p.procs {
		if pr.session == call.Session && pr.running() {
			running++
		}
	}
	if running >= maxProcsPerSession {
		return tools.ErrorResult(fmt.Sprintf("this conversation already runs %d background processes (the most allowed); stop one first", running))
	}
	cmd := p.exec.command([]string{p.exec.opts.Shell, "-c", command}, ws, ws, true, nil)
	out := &ring{max: processRing}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		return tools.ErrorResult("could not start the command: " + err.Error())
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	pr := &process{id: "p" + hex.EncodeToString(b[:]), session: call.Session, command: command, started: time.Now(),
		pgid: cmd.Process.Pid, out: out, done: make(chan struct{})}
	p.procs[pr.id] = pr
	go func() {
		timer := time.AfterFunc(processMaxRuntime, func() { killGroup(pr.pgid) })
		err := cmd.Wait()
		timer.Stop()
		killGroup(pr.pgid) // its children go with it
		status, _ := exitLine(err, false, false, 0)
		p.mu.Lock()
		pr.status = status
		p.mu.Unlock()
		close(pr.done)
	}()
	p.exec.opts.Logger.Info("background process started", "session", call.Session, "process", pr.id)
	return tools.Result{ForLLM: fmt.Sprintf("started %s; read its output with {\"action\": \"output\", \"id\": %q}", pr.id, pr.id)}
}

func (p *Processes) get(call tools.Call, id string) *process {
	p.mu.Lock()
	defer p.mu.Unlock()
	pr := p.procs[id]
	if pr == nil || pr.session != call.Session {
		return nil
	}
	return pr
}

func (p *Processes) list(call tools.Call) tools.Result {
	p.mu.Lock()
	var mine []*process
	for _, pr := range p.procs {
		if pr.session == call.Session {
			mine = append(mine, pr)
		}
	}
	p.mu.Unlock()
	if len(mine) == 0 {
		return tools.Result{ForLLM: "no background processes"}
	}
	sort.Slice(mine, func(i, j int) bool { return mine[i].started.Before(mine[j].started) })
	var b strings.Builder
	for _, pr := range mine {
		b.WriteString(pr.describe() + "\n")
	}
	return tools.Result{ForLLM: b.String()}
}

// Close kills every background process (the daemon is stopping).
func (p *Processes) Close() {
	p.mu.Lock()
	p.closed = true
	procs := make([]*process, 0, len(p.procs))
	for _, pr := range p.procs {
		procs = append(procs, pr)
	}
	p.mu.Unlock()
	for _, pr := range procs {
		killGroup(pr.pgid)
		<-pr.done
	}
}

func (pr *process) running() bool {
	select {
	case <-pr.done:
		return false
	default:
		return true
	}
}

func (pr *process) describe() string {
	state := "running"
	if !pr.running() {
		state = pr.status
	}
	return fmt.Sprintf("%s [%s] started %s ago: %s", pr.id, state, time.Since(pr.started).Round(time.Second), pr.command)
}

// ring keeps the newest max bytes written to it.
type ring struct {
	mu    sync.Mutex
	max   int
	buf   []byte
	total int64
}

func (r *ring) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.total += int64(len(p))
	r.buf = append(r.buf, p...)
	if len(r.buf) > r.max {
		r.buf = append(r.buf[:0], r.buf[len(r.buf)-r.max:]...)
	}
	return len(p), nil
}

func (r *ring) String() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.total > int64(len(r.buf)) {
		return fmt.Sprintf("[the first %d bytes of output were dropped]\n%s", r.total-int64(len(r.buf)), r.buf)
	}
	return string(r.buf)
}

// StopStartedSince kills the background processes of session started at
// or after since, with their process groups, and returns how many were
// still running: a stopped turn's processes go with it (/stop), those of
// earlier turns keep running.
func (p *Processes) StopStartedSince(session string, since time.Time) int {
	p.mu.Lock()
	var stop []*process
	for _, pr := range p.procs {
		if pr.session == session && !pr.started.Before(since) && pr.running() {
			stop = append(stop, pr)
		}
	}
	p.mu.Unlock()
	for _, pr := range stop {
		killGroup(pr.pgid)
		select {
		case <-pr.done:
		case <-time.After(5 * time.Second):
		}
	}
	return len(stop)
}
