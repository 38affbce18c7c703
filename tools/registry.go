package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/switchboard-chat/switchboard/tools/scrub"
)

// RateLimiter decides whether another tool call is allowed for a key (the
// session). Implementations live in storage.
type RateLimiter interface {
	Allow(ctx context.Context, key string) (bool, error)
}

// RegistryOptions configures a Registry. Every field is optional.
type RegistryOptions struct {
	// Scrubber removes credentials from every result. Nil means a scrubber
	// with only the static patterns.
	Scrubber *scrub.Scrubber
	// RateLimiter limits tool calls per session. Nil means no limit.
	RateLimiter RateLimiter
	// Logger receives one line per call. Nil discards them.
	Logger *slog.Logger
	// Observe, if set, is told the outcome of every call (for metrics).
	Observe func(tool string, took time.Duration, isError bool)
}

// Registry holds the tools and runs calls to them.
type Registry struct {
	opts    RegistryOptions
	mu      sync.RWMutex
	tools   map[string]Tool
	version atomic.Uint64 // bumped by every Register and Unregister

	described atomic.Pointer[describedTools] // Specs' tools, for one version
}

// describedTools are the registry's tools with their specs, sorted by name,
// as they were at one version of the registry.
type describedTools struct {
	version uint64
	tools   []Tool
	specs   []Spec
}

// NewRegistry returns an empty registry.
func NewRegistry(opts RegistryOptions) *Registry {
	if opts.Scrubber == nil {
		opts.Scrubber = scrub.New()
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Registry{opts: opts, tools: map[string]Tool{}}
}

// Register adds t. Names must be unique.
func (r *Registry) Register(t Tool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name()]; dup {
		return fmt.Errorf("tool %q registered twice", t.Name())
	}
	r.tools[t.Name()] = t
	r.version.Add(1)
	return nil
}

// Unregister removes the tool called name (an MCP server went away); a
// call to it from then on is refused as unknown.
func (r *Registry) Unregister(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.tools[name]; ok {
		delete(r.tools, name)
		r.version.Add(1)
	}
}

// Version changes whenever a tool is registered or removed.
func (r *Registry) Version() uint64 { return r.version.Load() }

// Get returns the tool called name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// All returns every registered tool, sorted by name.
func (r *Registry) All() []Tool {
	all, _ := r.sorted()
	return all
}

// sorted returns every registered tool, sorted by name, and the version of
// the registry they are.
func (r *Registry) sorted() ([]Tool, uint64) {
	r.mu.RLock()
	version := r.version.Load() // Register bumps it with mu held
	out := make([]Tool, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t)
	}
	r.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, version
}

// Specs describes the tools for which allow returns true (all when allow is
// nil), sorted by name so prompts are stable. Every run asks for them, so
// each tool is described once per version of the registry (a tool's name,
// description and parameters do not change once it is registered); callers
// must not modify the Parameters they get.
func (r *Registry) Specs(allow func(Tool) bool) []Spec {
	d := r.describe()
	specs := make([]Spec, 0, len(d.specs))
	for i, t := range d.tools { // allow may look at the registry itself: no lock held while it runs
		if allow == nil || allow(t) {
			specs = append(specs, d.specs[i])
		}
	}
	return specs
}

// describe returns the tools with their specs at the current version.
func (r *Registry) describe() *describedTools {
	version := r.version.Load()
	if d := r.described.Load(); d != nil && d.version == version {
		return d
	}
	all, version := r.sorted()
	d := &describedTools{version: version, tools: all, specs: make([]Spec, len(all))}
	for i, t := range all {
		d.specs[i] = Spec{Name: t.Name(), Description: t.Description(), Parameters: t.Parameters()}
	}
	r.described.Store(d)
	return d
}

// Scrubber returns the registry's scrubber.
func (r *Registry) Scrubber() *scrub.Scrubber { return r.opts.Scrubber }

// Execute runs one tool call: it puts call into the context, checks the
// session's rate limit, runs the tool and scrubs credentials from the
// result. It never panics on a misbehaving tool and always returns a result
// the LLM can read.
func (r *Registry) Execute(ctx context.Context, call Call, name string, args json.RawMessage) (res Result) {
	t, ok := r.Get(name)
	if !ok {
		return ErrorResult(fmt.Sprintf("unknown tool %q", name))
	}
	ctx = WithCall(ctx, call)
	if r.opts.RateLimiter != nil {
		allowed, err := r.opts.RateLimiter.Allow(ctx, call.Session)
		if err != nil {
			return ErrorResult("tool rate limiter unavailable, try again later")
		}
		if !allowed {
			return ErrorResult("rate limit exceeded for tool calls in this session; wait before calling tools again")
		}
	}
	start := time.Now()
	defer func() {
		if p := recover(); p != nil {
			r.opts.Logger.ErrorContext(ctx, "tool panicked", "tool", name, "session", call.Session, "panic", fmt.Sprint(p))
			res = ErrorResult(fmt.Sprintf("tool %q failed internally", name))
		}
		res.ForLLM = r.opts.Scrubber.Scrub(res.ForLLM)
		res.ForUser = r.opts.Scrubber.Scrub(res.ForUser)
		took := time.Since(start)
		r.opts.Logger.InfoContext(ctx, "tool call", "tool", name, "session", call.Session, "took_ms", took.Milliseconds(), "error", res.IsError)
		if r.opts.Observe != nil {
			r.opts.Observe(name, took, res.IsError)
		}
	}()
	if len(args) == 0 {
		args = json.RawMessage("{}")
	}
	return t.Execute(ctx, args)
}
