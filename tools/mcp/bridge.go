// Package mcp bridges the tools of MCP servers (stdio, SSE, streamable
// HTTP; modelcontextprotocol/go-sdk) into the tool registry as
// mcp_<server>_<tool>, in groups mcp and mcp:<server>, and the resources
// of a server that offers them as one read-only tool,
// mcp_<server>_resources (list, read). A server's annotations choose each
// tool's side-effect class, so policy and approvals apply as to any tool. Each server is kept connected by its own
// loop: pinged every 30 s, reconnected with backoff (2 s doubling to 60 s);
// while it is down its tools are withdrawn, and they come back with it.
package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/switchboard-chat/switchboard/tools"
)

// Server is one MCP server to bridge.
type Server struct {
	Name      string
	Transport string // stdio | sse | http
	Command   []string
	Env       map[string]string // a stdio server's environment (besides PATH)
	URL       string
	Headers   map[string]string
	// Allow, when not empty, bridges only these tools (the server's own
	// names); Deny never bridges these.
	Allow, Deny []string
	// GrantAgents and GrantUsers may use the server's tools without asking
	// (read by the grants check, not by the bridge).
	GrantAgents, GrantUsers []string
}

// Options configures a Bridge; zero durations take the defaults.
type Options struct {
	Registry *tools.Registry
	Logger   *slog.Logger
	// Health is how often a connected server is pinged (30 s).
	Health time.Duration
	// MinBackoff and MaxBackoff bound the wait between reconnects (2 s, 60 s).
	MinBackoff, MaxBackoff time.Duration
	// Timeout bounds connecting, listing and pinging (20 s).
	Timeout time.Duration
	// Permit, when set, decides who may use a server's tools (grants);
	// the tools check it before any approval is asked. Nil: everyone.
	// The resources tool is checked as the server's tool "resources".
	Permit func(ctx context.Context, call tools.Call, server, tool string) (why string, ok bool)
}

// Bridge keeps MCP servers connected and their tools registered.
type Bridge struct {
	o      Options
	client *sdk.Client

	mu      sync.Mutex
	servers map[string]*server
	wg      sync.WaitGroup
}

// Status is what /status and doctor say of one server.
type Status struct {
	Name      string    `json:"name"`
	Transport string    `json:"transport"`
	Up        bool      `json:"up"`
	Tools     int       `json:"tools"`
	Resources bool      `json:"resources,omitempty"` // its resources tool is bridged
	LastError string    `json:"last_error,omitempty"`
	Since     time.Time `json:"since"` // when it last came up or went down
}

// New returns a Bridge with no servers; Add them.
func New(o Options) *Bridge {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Health <= 0 {
		o.Health = 30 * time.Second
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 2 * time.Second
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = 60 * time.Second
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Second
	}
	return &Bridge{o: o, servers: map[string]*server{},
		client: sdk.NewClient(&sdk.Implementation{Name: "switchboard", Version: "1"}, nil)}
}

// server is one server's state, owned by its loop.
type server struct {
	cfg    Server
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	session *sdk.ClientSession
	tools   []string // registered names
	status  Status
}

// Add starts bridging s (hot: no restart needed). A server of the same
// name is replaced.
func (b *Bridge) Add(s Server) {
	b.Remove(s.Name)
	ctx, cancel := context.WithCancel(context.Background())
	srv := &server{cfg: s, cancel: cancel, done: make(chan struct{}),
		status: Status{Name: s.Name, Transport: s.Transport, Since: time.Now()}}
	b.mu.Lock()
	b.servers[s.Name] = srv
	b.mu.Unlock()
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		defer close(srv.done)
		b.run(ctx, srv)
	}()
}

// Remove stops bridging the server called name: its tools are withdrawn
// and a stdio server is stopped with its children.
func (b *Bridge) Remove(name string) {
	b.mu.Lock()
	srv := b.servers[name]
	delete(b.servers, name)
	b.mu.Unlock()
	if srv != nil {
		srv.cancel()
		<-srv.done
	}
}

// Close stops every server.
func (b *Bridge) Close() {
	b.mu.Lock()
	names := make([]string, 0, len(b.servers))
	for n := range b.servers {
		names = append(names, n)
	}
	b.mu.Unlock()
	for _, n := range names {
		b.Remove(n)
	}
	b.wg.Wait()
}

// Server returns the configuration of the server called name.
func (b *Bridge) Server(name string) (Server, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.servers[name]
	if !ok {
		return Server{}, false
	}
	return s.cfg, true
}

// Statuses lists the servers, by name.
func (b *Bridge) Statuses() []Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Status, 0, len(b.servers))
	for _, s := range b.servers {
		s.mu.Lock()
		out = append(out, s.status)
		s.mu.Unlock()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// run connects, registers the tools, watches the connection, and starts
// over after a backoff whenever the server goes away, until ctx ends.
func (b *Bridge) run(ctx context.Context, srv *server) {
	log := b.o.Logger.With("mcp_server", srv.cfg.Name)
	backoff := b.o.MinBackoff
	for ctx.Err() == nil {
		err := b.serve(ctx, srv, log, func() { backoff = b.o.MinBackoff })
		if ctx.Err() != nil {
			return
		}
		// serve has set it down already unless connecting failed; doing
		// it again changes nothing.
		srv.setDown(err)
		log.Warn("MCP server unavailable; its tools are withdrawn until it is back", "err", err, "retry_in", backoff.String())
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, b.o.MaxBackoff)
	}
}

// serve runs one connection: it returns when the server goes away or ctx
// ends, with its tools withdrawn and its process stopped. The status says
// the server is down, and why, before its tools are withdrawn: whoever finds
// them gone (the registry, a caller) finds the status saying so.
func (b *Bridge) serve(ctx context.Context, srv *server, log *slog.Logger, up func()) (err error) {
	cs, kill, err := connect(ctx, b.client, srv.cfg, b.o.Timeout)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer func() {
		if ctx.Err() == nil {
			srv.setDown(err)
		}
		b.withdraw(srv)
		_ = cs.Close()
		kill()
	}()
	list, err := b.listTools(ctx, cs)
	if err != nil {
		return fmt.Errorf("list tools: %w", err)
	}
	names := b.register(srv, cs, list)
	res := b.registerResources(srv, cs)
	srv.setUp(cs, names, res)
	up()
	log.Info("MCP server connected", "tools", len(names), "resources", res != "")

	ended := make(chan error, 1)
	go func() { ended <- cs.Wait() }()
	tick := time.NewTicker(b.o.Health)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case err := <-ended:
			if err == nil {
				err = errors.New("the server closed the connection")
			}
			return err
		case <-tick.C:
			pctx, cancel := context.WithTimeout(ctx, b.o.Timeout)
			err := cs.Ping(pctx, nil)
			cancel()
			if err != nil && ctx.Err() == nil {
				return fmt.Errorf("health check: %w", err)
			}
		}
	}
}

// listTools returns every tool the server offers (all pages).
func (b *Bridge) listTools(ctx context.Context, cs *sdk.ClientSession) ([]*sdk.Tool, error) {
	lctx, cancel := context.WithTimeout(ctx, b.o.Timeout)
	defer cancel()
	var out []*sdk.Tool
	for t, err := range cs.Tools(lctx, nil) {
		if err != nil {
			return nil, err
		}
		out = append(out, t)
		if len(out) > 500 {
			return nil, errors.New("the server offers more than 500 tools; narrow it with tools.allow")
		}
	}
	return out, nil
}

// register adds the server's allowed tools to the registry and returns
// their names. A name already taken (by another tool) is skipped.
func (b *Bridge) register(srv *server, cs *sdk.ClientSession, list []*sdk.Tool) []string {
	var names []string
	for _, t := range list {
		if t == nil || !toolAllowed(srv.cfg, t.Name) {
			continue
		}
		bt := newTool(srv, t, b.o.Permit)
		if err := b.o.Registry.Register(bt); err != nil {
			b.o.Logger.Warn("MCP tool not bridged", "mcp_server", srv.cfg.Name, "tool", t.Name, "err", err)
			continue
		}
		names = append(names, bt.name)
	}
	return names
}

// registerResources adds the server's resources tool when the server
// offers resources and tools.allow/deny let it through, and returns its
// name ("" when it is not bridged). A tool of the server's own that takes
// the name wins.
func (b *Bridge) registerResources(srv *server, cs *sdk.ClientSession) string {
	if !hasResources(cs) || !toolAllowed(srv.cfg, ResourcesTool) {
		return ""
	}
	rt := newResourcesTool(srv, b.o.Permit, b.o.Timeout)
	if err := b.o.Registry.Register(rt); err != nil {
		b.o.Logger.Warn("MCP resources not bridged", "mcp_server", srv.cfg.Name, "err", err)
		return ""
	}
	return rt.name
}

// toolAllowed applies a server's tools.allow and tools.deny.
func toolAllowed(s Server, name string) bool {
	if len(s.Allow) > 0 && !slices.Contains(s.Allow, name) {
		return false
	}
	return !slices.Contains(s.Deny, name)
}

// withdraw removes the server's tools from the registry.
func (b *Bridge) withdraw(srv *server) {
	srv.mu.Lock()
	names := srv.tools
	srv.tools, srv.session = nil, nil
	srv.mu.Unlock()
	for _, n := range names {
		b.o.Registry.Unregister(n)
	}
}

// setUp records a connected session, its tools' names and its resources
// tool's ("" for none).
func (s *server) setUp(cs *sdk.ClientSession, names []string, resources string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.session, s.tools = cs, names
	if resources != "" {
		s.tools = append(slices.Clip(names), resources)
	}
	s.status.Up, s.status.Tools, s.status.LastError, s.status.Since = true, len(names), "", time.Now()
	s.status.Resources = resources != ""
}

func (s *server) setDown(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.status.Up {
		s.status.Since = time.Now()
	}
	s.status.Up, s.status.Tools, s.status.Resources = false, 0, false
	if err != nil {
		s.status.LastError = err.Error()
	}
}

// current returns the live session, nil while the server is down.
func (s *server) current() *sdk.ClientSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.session
}
