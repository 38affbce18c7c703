// Package mcptest is a real MCP server (modelcontextprotocol/go-sdk) for
// tests, like net/http/httptest: the same tools and resources over
// streamable HTTP, or over stdio from a test binary that re-runs itself as
// the server.
package mcptest

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"syscall"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewServer returns a server with these tools, and the resources of
// addResources:
//   - echo {text} (read-only, closed world): returns text
//   - search {query} (read-only, open world)
//   - delete_all {} (destructive)
//   - plain {} (no annotations)
//   - env {} : the server process's environment, one VAR=value a line, sorted
//   - pid {} : the server's process id
//   - child {} : starts `sleep 600` as a child and returns its pid
func NewServer() *sdk.Server { return NewServerWith(Options{}) }

// Options varies the server for a test; the zero value is NewServer's.
type Options struct {
	// NoResources leaves the resources out: the server then does not
	// advertise the resources capability.
	NoResources bool
	// ExtraResources adds that many small text resources, ExtraURI(0) …
	// (text "extra N"), listed before the fixed ones.
	ExtraResources int
	// PageSize is how many items one list page holds (the SDK's default
	// when 0).
	PageSize int
}

// NewServerWith returns NewServer's server varied by o.
func NewServerWith(o Options) *sdk.Server {
	s := sdk.NewServer(&sdk.Implementation{Name: "mcptest", Version: "1"}, &sdk.ServerOptions{PageSize: o.PageSize})
	if !o.NoResources {
		addResources(s, o.ExtraResources)
	}
	f := false
	text := func(s string) *sdk.CallToolResult {
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
	}
	obj := json.RawMessage(`{"type":"object"}`)
	s.AddTool(&sdk.Tool{Name: "echo", Description: "echoes text",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: &f}},
		func(_ context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			var a struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return text("echo: " + a.Text), nil
		})
	s.AddTool(&sdk.Tool{Name: "search", Description: "searches the web", InputSchema: obj,
		Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("results"), nil })
	t := true
	s.AddTool(&sdk.Tool{Name: "delete_all", Description: "deletes everything", InputSchema: obj,
		Annotations: &sdk.ToolAnnotations{DestructiveHint: &t}},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("deleted"), nil })
	s.AddTool(&sdk.Tool{Name: "plain", Description: "says nothing about itself", InputSchema: obj},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) { return text("plain"), nil })
	s.AddTool(&sdk.Tool{Name: "env", Description: "the environment", InputSchema: obj},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			env := os.Environ()
			slices.Sort(env)
			out := ""
			for _, e := range env {
				out += e + "\n"
			}
			return text(out), nil
		})
	s.AddTool(&sdk.Tool{Name: "pid", Description: "the process id", InputSchema: obj},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			return text(strconv.Itoa(os.Getpid())), nil
		})
	s.AddTool(&sdk.Tool{Name: "child", Description: "starts a child process", InputSchema: obj},
		func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			cmd := exec.Command("sleep", "600")
			if err := cmd.Start(); err != nil {
				return nil, err
			}
			go func() { _ = cmd.Wait() }()
			return text(strconv.Itoa(cmd.Process.Pid)), nil
		})
	return s
}

// HTTPServer is NewServer served over streamable HTTP.
type HTTPServer struct {
	*httptest.Server
}

// Close drops every connection (clients' open event streams included, as
// a crash would) and stops the server.
func (s *HTTPServer) Close() {
	s.CloseClientConnections()
	s.Server.Close()
}

// HTTP serves NewServer over streamable HTTP on addr ("127.0.0.1:0" for
// any port); Close stops it.
func HTTP(addr string) (*HTTPServer, error) { return HTTPWith(addr, Options{}) }

// HTTPWith is HTTP for NewServerWith(o).
func HTTPWith(addr string, o Options) (*HTTPServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	srv := NewServerWith(o)
	ts := httptest.NewUnstartedServer(sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	return &HTTPServer{ts}, nil
}

// SSE serves NewServer over the older SSE transport; Close stops it.
func SSE() *HTTPServer {
	srv := NewServer()
	ts := httptest.NewServer(sdk.NewSSEHandler(func(*http.Request) *sdk.Server { return srv }, nil))
	return &HTTPServer{ts}
}

// StdioEnv, set to 1 in a test binary's environment, makes ServeStdioIfAsked
// serve instead of running the tests; StubbornEnv=1 makes the server ignore
// a closed stdin and SIGTERM, as a badly written server would.
const (
	StdioEnv    = "MCPTEST_STDIO"
	StubbornEnv = "MCPTEST_STUBBORN"
)

// ServeStdioIfAsked serves NewServer over stdin/stdout and exits when the
// process was started with StdioEnv=1; call it first in TestMain.
func ServeStdioIfAsked() {
	if os.Getenv(StdioEnv) != "1" {
		return
	}
	stubborn := os.Getenv(StubbornEnv) == "1"
	if stubborn {
		signal.Ignore(syscall.SIGTERM)
	}
	err := NewServer().Run(context.Background(), &sdk.StdioTransport{})
	if stubborn {
		select {} // closed stdin or not, it stays
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}
