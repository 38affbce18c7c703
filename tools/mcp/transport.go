package mcp

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioStopGrace is how long a stdio server gets to exit after its stdin
// closes before it is signalled (the SDK's transport then escalates from
// SIGTERM to SIGKILL; the process group is killed after that).
const stdioStopGrace = 2 * time.Second

// transport returns how to reach s, and a func that kills whatever of it is
// left running (a stdio server's process group); both are new per attempt.
func transport(s Server) (sdk.Transport, func(), error) {
	switch s.Transport {
	case "stdio":
		if len(s.Command) == 0 {
			return nil, nil, fmt.Errorf("no command")
		}
		cmd := exec.Command(s.Command[0], s.Command[1:]...)
		cmd.Env = cleanEnv(s.Env)
		cmd.Stderr = nil // the server's stderr is not ours to read; it goes nowhere
		// Its own process group, so stopping it stops its children too;
		// killed by the kernel if the daemon dies first.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		var once sync.Once
		kill := func() {
			once.Do(func() {
				if cmd.Process != nil {
					_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
				}
			})
		}
		return &sdk.CommandTransport{Command: cmd, TerminateDuration: stdioStopGrace}, kill, nil
	case "sse":
		return &sdk.SSEClientTransport{Endpoint: s.URL, HTTPClient: httpClient(s.Headers)}, func() {}, nil
	case "http":
		return &sdk.StreamableClientTransport{Endpoint: s.URL, HTTPClient: httpClient(s.Headers), MaxRetries: -1}, func() {}, nil
	}
	return nil, nil, fmt.Errorf("unknown transport %q (want stdio, sse or http)", s.Transport)
}

// cleanEnv is a stdio server's environment: the daemon's PATH (to find
// interpreters) and the configured variables, nothing else — no secrets of
// the daemon leak into it.
func cleanEnv(env map[string]string) []string {
	out := []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	return out
}

// httpClient sends headers with every request. Its transport keeps
// idleMCPConns idle connections to the server: http.DefaultTransport keeps
// 2, so with more tool calls at once every further call opened (and
// handshook) a connection and closed it after its answer.
func httpClient(headers map[string]string) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConnsPerHost = idleMCPConns
	t.MaxIdleConns = max(t.MaxIdleConns, idleMCPConns)
	if len(headers) == 0 {
		return &http.Client{Transport: t}
	}
	return &http.Client{Transport: headerTransport{headers: headers, next: t}}
}

// idleMCPConns is how many idle connections to one MCP server a client
// keeps: about as many as runs may call its tools at once.
const idleMCPConns = 16

type headerTransport struct {
	headers map[string]string
	next    http.RoundTripper
}

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h.headers {
		r.Header.Set(k, v)
	}
	return h.next.RoundTrip(r)
}

// connect opens a session to s within timeout. The session's context
// lives until stop is called (an SSE transport reads its event stream
// under it), so the timeout cancels only a connect that hangs.
func connect(ctx context.Context, client *sdk.Client, s Server, timeout time.Duration) (*sdk.ClientSession, func(), error) {
	t, kill, err := transport(s)
	if err != nil {
		return nil, nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	hung := time.AfterFunc(timeout, cancel)
	cs, err := client.Connect(sctx, t, nil)
	if !hung.Stop() && err == nil {
		err = fmt.Errorf("no answer within %s", timeout)
		_ = cs.Close()
	}
	stop := func() { cancel(); kill() }
	if err != nil {
		stop()
		return nil, nil, err
	}
	return cs, stop, nil
}
