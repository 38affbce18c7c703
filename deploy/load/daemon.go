package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// daemon is the measured process.
type daemon struct {
	cmd    *exec.Cmd
	out    *tailBuffer
	exited chan struct{} // closed when the process has exited
	err    error         // its exit status, once exited is closed
}

// startDaemon starts command with this process's environment plus env.
func startDaemon(command, env []string) (*daemon, error) {
	cmd := exec.Command(command[0], command[1:]...)
	cmd.Env = append(os.Environ(), env...)
	d := &daemon{cmd: cmd, out: &tailBuffer{max: 64 << 10}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = d.out, d.out
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", command[0], err)
	}
	go func() {
		d.err = cmd.Wait()
		close(d.exited)
	}()
	return d, nil
}

func (d *daemon) pid() int { return d.cmd.Process.Pid }

// waitReady polls url until it answers 2xx; it fails if the daemon exits
// first or ctx ends.
func (d *daemon) waitReady(ctx context.Context, url string) error {
	client := &http.Client{Timeout: time.Second}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("ready URL %q: %w", url, err)
		}
		if resp, err := client.Do(req); err == nil {
			resp.Body.Close()
			if resp.StatusCode/100 == 2 {
				return nil
			}
		}
		select {
		case <-d.exited:
			return fmt.Errorf("the daemon exited before it was ready (%v); its output ends:\n%s", d.err, d.out.String())
		case <-ctx.Done():
			return fmt.Errorf("the daemon was not ready at %s: %w; its output ends:\n%s", url, ctx.Err(), d.out.String())
		case <-tick.C:
		}
	}
}

// stop asks the daemon to shut down (SIGTERM) and kills it if it has not
// exited within 20 s.
func (d *daemon) stop() {
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-d.exited:
	case <-time.After(20 * time.Second):
		_ = d.cmd.Process.Kill()
		<-d.exited
	}
	var exit *exec.ExitError
	if d.err != nil && !errors.As(d.err, &exit) {
		fmt.Fprintln(os.Stderr, "load: waiting for the daemon:", d.err)
	}
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = t.buf[over:]
		if i := bytes.IndexByte(t.buf, '\n'); i >= 0 {
			t.buf = t.buf[i+1:] // start at a whole line
		}
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf)
}
