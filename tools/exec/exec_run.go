package exec

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/switchboard-chat/switchboard/tools"
)

// outputGrace is how long exec waits for the output pipe to close after the
// command's process group was killed (a daemonized grandchild may hold it).
const outputGrace = 2 * time.Second

// defaultExecPath is the PATH of commands unless Options.Env says
// otherwise.
const defaultExecPath = "/usr/local/bin:/usr/bin:/bin"

// env returns the child environment: never the daemon's own.
func (e *Exec) env(home string) []string {
	env := []string{"PATH=" + defaultExecPath, "LANG=C.UTF-8"}
	if e.opts.Env != nil {
		env = append([]string{}, e.opts.Env...)
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "HOME=") {
			return env
		}
	}
	return append(env, "HOME="+home)
}

// run executes command in dir in its own process group, with stdin from
// /dev/null and stdout+stderr captured together up to MaxOutput. On
// timeout or cancellation the whole group is killed; it is also killed
// when the shell exits, so background jobs do not outlive the call.
func (e *Exec) run(ctx context.Context, log *slog.Logger, command, dir, home string, timeout time.Duration, extraEnv ...string) tools.Result {
	return e.runArgv(ctx, log, []string{e.opts.Shell, "-c", command}, dir, home, timeout, true, extraEnv...)
}

// command builds the child process for argv in dir: the exec user, its
// own process group, stdin from /dev/null, and, when sandboxed and a
// sandbox is configured, inside it.
func (e *Exec) command(argv []string, dir, home string, sandboxed bool, extraEnv []string) *exec.Cmd {
	if sandboxed && e.opts.Sandbox != nil {
		argv = e.opts.Sandbox.Wrap(argv, dir)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = append(e.env(home), extraEnv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if e.opts.RunAs != nil {
		cmd.SysProcAttr.Credential = e.opts.RunAs.credential()
	}
	return cmd
}

// runArgv is run for a program and its arguments, no shell involved.
func (e *Exec) runArgv(ctx context.Context, log *slog.Logger, argv []string, dir, home string, timeout time.Duration, sandboxed bool, extraEnv ...string) tools.Result {
	cmd := e.command(argv, dir, home, sandboxed, extraEnv)
	r, w, err := os.Pipe()
	if err != nil {
		return tools.ErrorResult("could not start the command: out of resources; try again later")
	}
	defer r.Close()
	cmd.Stdout, cmd.Stderr = w, w
	start := time.Now()
	if err := cmd.Start(); err != nil {
		w.Close()
		log.Error("exec start", "error", err)
		return tools.ErrorResult(fmt.Sprintf("could not start %s; ask an admin to check exec settings", argv[0]))
	}
	w.Close()
	pgid := cmd.Process.Pid

	out := &capped{limit: e.opts.MaxOutput}
	readDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(out, r)
		close(readDone)
	}()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	timer := time.NewTimer(timeout)
	defer timer.Stop()
	var waitErr error
	timedOut, cancelled := false, false
	select {
	case waitErr = <-waited:
	case <-timer.C:
		timedOut = true
		killGroup(pgid)
		waitErr = <-waited
	case <-ctx.Done():
		cancelled = true
		killGroup(pgid)
		waitErr = <-waited
	}
	killGroup(pgid)
	select {
	case <-readDone:
	case <-time.After(outputGrace):
		r.Close() // unblocks the reader
		<-readDone
	}

	status, failed := exitLine(waitErr, timedOut, cancelled, timeout)
	log.Info("exec finished", "took_ms", time.Since(start).Milliseconds(), "status", status, "output_bytes", out.total)
	var b strings.Builder
	b.WriteString(out.text())
	if out.truncated() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[output truncated at %s]\n", sizeLabel(e.opts.MaxOutput))
	} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteByte('\n')
	}
	b.WriteString(status)
	return tools.Result{ForLLM: b.String(), IsError: failed}
}

// killGroup kills every process in the group.
func killGroup(pgid int) {
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
}

// exitLine describes how the command ended and whether that is a failure.
func exitLine(err error, timedOut, cancelled bool, timeout time.Duration) (string, bool) {
	switch {
	case timedOut:
		return fmt.Sprintf("timed out after %s; the command and its child processes were killed", durationLabel(timeout)), true
	case cancelled:
		return "cancelled; the command and its child processes were killed", true
	case err == nil:
		return "exit status 0", false
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return "killed by signal " + ws.Signal().String(), true
		}
		return fmt.Sprintf("exit status %d", ee.ExitCode()), ee.ExitCode() != 0
	}
	return "the command failed to run", true
}

// durationLabel prints whole seconds as "60s" and anything else as Go does.
func durationLabel(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", int64(d/time.Second))
	}
	return d.String()
}

// sizeLabel prints a byte count as "64 KiB" when it is whole KiB.
func sizeLabel(n int) string {
	if n%1024 == 0 {
		return fmt.Sprintf("%d KiB", n/1024)
	}
	return fmt.Sprintf("%d bytes", n)
}

// capped keeps the first limit bytes written and counts the rest, so the
// child never blocks on a full pipe.
type capped struct {
	limit int
	buf   []byte
	total int64
}

func (c *capped) Write(p []byte) (int, error) {
	c.total += int64(len(p))
	if room := c.limit - len(c.buf); room > 0 {
		c.buf = append(c.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capped) truncated() bool { return c.total > int64(len(c.buf)) }

// text returns the kept output as valid UTF-8, without a rune cut in half
// at the limit.
func (c *capped) text() string {
	b := c.buf
	if c.truncated() {
		for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
			if r, size := utf8.DecodeLastRune(b); r != utf8.RuneError || size != 1 {
				break
			}
			b = b[:len(b)-1]
		}
	}
	return strings.ToValidUTF8(string(b), "\uFFFD")
}
