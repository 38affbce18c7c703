package bot

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Subagents. A subagent is a copy of the spawning agent with fewer tools
// (tools.SubagentDeny, and tools.LeafDeny at the deepest level allowed)
// working on one task in its own session, scope sub:<id>:<parent session>.
// It runs on the lanes like any session, so approvals park and resume it,
// and recovery continues it after a crash on any replica. Its final reply
// is announced to the parent session as a message (several finishing
// together wake the parent once), or handed straight back to a parent that
// waits (spawn run). The running count is kept in Redis with leases, so
// the limit holds across replicas and a dead replica's runs stop counting.

// Subagent defaults (subagents: in the config).
const (
	DefaultSubagentConcurrency = 8
	DefaultSubagentDepth       = 1
	DefaultSubagentChildren    = 5
	DefaultSubagentArchive     = 60 * time.Minute
	// subagentIterations bounds a subagent's LLM ⇄ tools loop.
	subagentIterations = 20
	// subagentLease is how long a running slot counts without a refresh.
	subagentLease = 30 * time.Second
	// subagentPoll is how often a run looks for a cancel request and
	// refreshes its slot.
	subagentPoll = time.Second
	// announceDebounce: results arriving within this wake the parent once.
	announceDebounce = time.Second
)

// SubagentSlot is what SubagentStore.AcquireSubagent saw: whether it took
// a slot, and the counts (including the new one when it did).
type SubagentSlot struct {
	Got               bool
	Running, Children int
}

// SubagentStore keeps what every replica must see of subagents (Redis
// implements it): running slots with leases, the records spawn list shows,
// and cancel requests.
type SubagentStore interface {
	AcquireSubagent(ctx context.Context, id, parent string, maxRunning, maxChildren int, lease time.Duration) (SubagentSlot, error)
	RefreshSubagent(ctx context.Context, id, parent string, lease time.Duration) error
	ReleaseSubagent(ctx context.Context, id, parent string) error
	SaveSubagent(ctx context.Context, s tools.Subagent, keep time.Duration) error
	Subagents(ctx context.Context, parent string) ([]tools.Subagent, error)
	Subagent(ctx context.Context, parent, id string) (tools.Subagent, bool, error)
	RequestCancel(ctx context.Context, id string) error
	CancelRequested(ctx context.Context, id string) (bool, error)
}

// SubagentOptions bounds subagents; zero values take the defaults. A nil
// Store turns subagents off.
type SubagentOptions struct {
	Store         SubagentStore
	MaxConcurrent int // running at once across all replicas
	MaxDepth      int // how deep subagents may nest
	MaxChildren   int // running at once per parent session
	ArchiveAfter  time.Duration
}

func (o SubagentOptions) withDefaults() SubagentOptions {
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultSubagentConcurrency
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultSubagentDepth
	}
	if o.MaxChildren <= 0 {
		o.MaxChildren = DefaultSubagentChildren
	}
	if o.ArchiveAfter <= 0 {
		o.ArchiveAfter = DefaultSubagentArchive
	}
	return o
}

// subagents is the router's local view: the runs on this replica (to
// cancel them at once and to hand results to waiting parents) and the
// pending parent wake-ups.
type subagents struct {
	mu      sync.Mutex
	running map[string]*subRun       // by id
	waiters map[string]chan struct{} // by id: a parent waits (spawn run)
	wakes   map[string]*time.Timer   // by parent session
}

// subRun is one subagent run on this replica.
type subRun struct {
	cancel    context.CancelFunc
	mu        sync.Mutex
	cancelled bool // the parent asked (not a shutdown)
}

func (s *subRun) markCancelled() {
	s.mu.Lock()
	s.cancelled = true
	s.mu.Unlock()
	s.cancel()
}

func (s *subRun) wasCancelled() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

// Spawn implements tools.Spawner.
func (r *Router) Spawn(ctx context.Context, call tools.Call, task, label string, wait bool) (tools.Subagent, error) {
	o := r.opts.Subagents
	if o.Store == nil {
		return tools.Subagent{}, fmt.Errorf("%w: subagents are off here", tools.ErrSubagentLimit)
	}
	parent := call.Session
	if depth := tools.SubDepth(parent); depth >= o.MaxDepth {
		return tools.Subagent{}, fmt.Errorf("%w: you are a subagent at depth %d and subagents may nest only %d deep "+
			"(subagents.max_depth); do this part yourself", tools.ErrSubagentLimit, depth, o.MaxDepth)
	}
	to, err := channels.ParseAddress(tools.OriginOf(parent))
	if err != nil || r.opts.Channels[to.Platform] == nil {
		return tools.Subagent{}, fmt.Errorf("%w: subagents run only for a chat conversation served here", tools.ErrSubagentLimit)
	}
	id := errorID()
	slot, err := o.Store.AcquireSubagent(ctx, id, parent, o.MaxConcurrent, o.MaxChildren, subagentLease)
	if err != nil {
		return tools.Subagent{}, err
	}
	if !slot.Got {
		if slot.Running >= o.MaxConcurrent {
			return tools.Subagent{}, fmt.Errorf("%w: at capacity %d/%d subagents running across the daemon (subagents.max_concurrent); "+
				"wait for one of yours to finish (spawn list), cancel one, or do the work yourself", tools.ErrSubagentLimit, slot.Running, o.MaxConcurrent)
		}
		return tools.Subagent{}, fmt.Errorf("%w: you already run %d/%d subagents (subagents.max_children); wait for one to finish "+
			"or cancel one", tools.ErrSubagentLimit, slot.Children, o.MaxChildren)
	}
	if label = strings.TrimSpace(label); label == "" {
		label = firstWords(task, 40)
	}
	sub := tools.Subagent{ID: id, Parent: parent, Label: label, Task: task, Status: tools.SubRunning, Sync: wait, Started: time.Now()}
	ctx = context.WithoutCancel(ctx)
	release := func() {
		if err := o.Store.ReleaseSubagent(ctx, id, parent); err != nil {
			r.log.Warn("subagent slot not released; its lease ends it", "subagent", id, "err", err)
		}
	}
	if err := o.Store.SaveSubagent(ctx, sub, o.ArchiveAfter); err != nil {
		release()
		return tools.Subagent{}, err
	}
	session := subSession(call.Agent, id, parent)
	text := fmt.Sprintf("[Task from %s, the agent that spawned you] %s\nWork on it with your tools; your final reply is your "+
		"result and goes back to %s. Nobody else reads your replies.", call.Agent, task, call.Agent)
	var done chan struct{}
	if wait {
		done = make(chan struct{})
		r.subs.mu.Lock()
		r.subs.waiters[id] = done
		r.subs.mu.Unlock()
		defer func() {
			r.subs.mu.Lock()
			delete(r.subs.waiters, id)
			r.subs.mu.Unlock()
		}()
	}
	if !r.handOver(ctx, session, text, "sub-task:"+id, true) {
		release()
		sub.Status, sub.Result, sub.Finished = tools.SubFailed, "could not be started (storage unavailable)", time.Now()
		_ = o.Store.SaveSubagent(ctx, sub, o.ArchiveAfter)
		return sub, fmt.Errorf("store the subagent's task: storage unavailable")
	}
	r.log.Info("subagent spawned", "subagent", id, "parent", parent, "sync", wait)
	if !wait {
		return sub, nil
	}
	return r.awaitSub(ctx, parent, id, done, sub)
}

// awaitSub waits for a subagent the parent runs synchronously: its end on
// this replica signals done; a store check every few seconds covers a
// run that recovery moved elsewhere.
func (r *Router) awaitSub(ctx context.Context, parent, id string, done chan struct{}, sub tools.Subagent) (tools.Subagent, error) {
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	deadline := time.After(maxRunDuration)
	for {
		select {
		case <-done:
		case <-tick.C:
		case <-deadline:
			return sub, fmt.Errorf("the subagent did not finish within %s; it goes on and announces its result", maxRunDuration)
		}
		got, ok, err := r.opts.Subagents.Store.Subagent(ctx, parent, id)
		if err == nil && ok && got.Status != tools.SubRunning {
			return got, nil
		}
	}
}

// Subagents implements tools.Spawner: running ones, and finished ones
// until they are archived (ArchiveAfter after they ended).
func (r *Router) Subagents(ctx context.Context, call tools.Call) ([]tools.Subagent, error) {
	if r.opts.Subagents.Store == nil {
		return nil, nil
	}
	all, err := r.opts.Subagents.Store.Subagents(ctx, call.Session)
	cutoff := time.Now().Add(-r.opts.Subagents.ArchiveAfter)
	return slices.DeleteFunc(all, func(s tools.Subagent) bool {
		return s.Status != tools.SubRunning && s.Finished.Before(cutoff)
	}), err
}

// CancelSubagents implements tools.Spawner. A run on this replica stops at
// once; one elsewhere within a second (it polls for the request).
func (r *Router) CancelSubagents(ctx context.Context, call tools.Call, which string) ([]tools.Subagent, error) {
	o := r.opts.Subagents
	if o.Store == nil {
		return nil, nil
	}
	all, err := o.Store.Subagents(ctx, call.Session)
	if err != nil {
		return nil, err
	}
	var out []tools.Subagent
	for i, s := range all { // newest first
		if s.Status != tools.SubRunning {
			continue
		}
		if which != "all" && which != s.ID && !(which == "last" && i == firstRunning(all)) {
			continue
		}
		if err := o.Store.RequestCancel(ctx, s.ID); err != nil {
			return out, err
		}
		r.subs.mu.Lock()
		run := r.subs.running[s.ID]
		r.subs.mu.Unlock()
		if run != nil {
			run.markCancelled()
		}
		out = append(out, s)
	}
	return out, nil
}

// firstRunning returns the index of the newest running subagent.
func firstRunning(all []tools.Subagent) int {
	return slices.IndexFunc(all, func(s tools.Subagent) bool { return s.Status == tools.SubRunning })
}

// subSession is the session key of subagent id of parent, run as agent.
func subSession(agent, id, parent string) string {
	return agentcore.SessionKey{Agent: agent, Scope: tools.SubScope(id, parent)}.String()
}

// startSub prepares a lane run of a subagent session: a context its
// cancel request ends, its slot's lease kept alive, and the subagent tool
// limits for the run. stop must be called when the run ends.
func (r *Router) startSub(ctx context.Context, session string, in *agentcore.RunInput) (context.Context, *subRun, func()) {
	id, parent, _ := tools.ParseSubScope(tools.ScopeOf(session))
	o := r.opts.Subagents
	deny := slices.Clone(tools.SubagentDeny)
	if tools.SubDepth(session) >= o.MaxDepth {
		deny = append(deny, tools.LeafDeny...)
	}
	in.Allow = func(t tools.Tool) bool { return !slices.Contains(deny, t.Name()) }
	in.MaxIterations = subagentIterations
	ctx, cancel := context.WithCancel(ctx)
	run := &subRun{cancel: cancel}
	r.subs.mu.Lock()
	r.subs.running[id] = run
	r.subs.mu.Unlock()
	stopped := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		refresh := time.Now()
		for {
			select {
			case <-stopped:
				return
			case <-time.After(subagentPoll):
			}
			if o.Store == nil {
				continue
			}
			if yes, err := o.Store.CancelRequested(ctx, id); err == nil && yes {
				run.markCancelled()
			}
			if time.Since(refresh) >= subagentLease/3 {
				refresh = time.Now()
				if err := o.Store.RefreshSubagent(ctx, id, parent, subagentLease); err != nil && ctx.Err() == nil {
					r.log.Debug("subagent slot not refreshed", "subagent", id, "err", err)
				}
			}
		}
	}()
	return ctx, run, func() {
		close(stopped)
		wg.Wait()
		cancel()
		r.subs.mu.Lock()
		delete(r.subs.running, id)
		r.subs.mu.Unlock()
	}
}

// finishSub records a subagent's end and gives its result to the parent:
// straight to a parent waiting on this replica, else as a message in the
// parent session (stored before the parent is woken; several results
// close together wake it once). A note in the subagent's session then
// marks it finished, so recovery leaves it alone. Repeating it (recovery
// after a crash) announces nothing twice.
func (r *Router) finishSub(ctx context.Context, session, status, result string) {
	ctx = context.WithoutCancel(ctx)
	id, parent, ok := tools.ParseSubScope(tools.ScopeOf(session))
	o := r.opts.Subagents
	if !ok || o.Store == nil {
		return
	}
	if err := o.Store.ReleaseSubagent(ctx, id, parent); err != nil {
		r.log.Warn("subagent slot not released; its lease ends it", "subagent", id, "err", err)
	}
	sub, found, err := o.Store.Subagent(ctx, parent, id)
	if err != nil || !found {
		sub = tools.Subagent{ID: id, Parent: parent, Label: id, Started: time.Now()}
	}
	r.subs.mu.Lock()
	waiter := r.subs.waiters[id]
	delete(r.subs.waiters, id) // closed once, below
	r.subs.mu.Unlock()
	// In this order, so that a crash anywhere leaves something recovery
	// completes, and whoever sees the record finished finds the session
	// finished too: the result reaches the parent (idempotent), the
	// session is marked ended, then the record says so.
	announced := false
	if waiter == nil && status != tools.SubCancelled { // a cancel was the parent's own doing
		text := fmt.Sprintf("[Subagent %s (%s) %s]\n%s", sub.Label, id, status, result)
		if !r.handOver(ctx, parent, text, "sub-result:"+id, false) {
			return // the subagent's session stays unfinished: recovery tries again
		}
		announced = true
	}
	note := agentcore.Message{Role: agentcore.RoleAssistant, Content: "(" + status + "; reported to " + tools.AgentOf(parent) + ")",
		ExternalID: "sub-end:" + id}
	if _, err := r.opts.History.Append(ctx, session, note); err != nil && !errors.Is(err, agentcore.ErrDuplicate) {
		r.log.Warn("subagent end not noted; recovery may announce it again (recognised)", "subagent", id, "err", err)
	}
	sub.Status, sub.Result, sub.Finished = status, result, time.Now()
	if err := o.Store.SaveSubagent(ctx, sub, o.ArchiveAfter); err != nil {
		r.log.Warn("subagent record not updated", "subagent", id, "err", err)
	}
	if waiter != nil {
		close(waiter)
	}
	if announced {
		r.wakeSoon(parent)
	}
	r.log.Info("subagent ended", "subagent", id, "status", status)
}

// parkSub gives up the running slot of a subagent whose run waits for an
// approval; the decision resumes it without one.
func (r *Router) parkSub(ctx context.Context, session string) {
	id, parent, ok := tools.ParseSubScope(tools.ScopeOf(session))
	if !ok || r.opts.Subagents.Store == nil {
		return
	}
	if err := r.opts.Subagents.Store.ReleaseSubagent(context.WithoutCancel(ctx), id, parent); err != nil {
		r.log.Warn("subagent slot not released; its lease ends it", "subagent", id, "err", err)
	}
}

// wakeSoon wakes a parent session after announceDebounce, once for all
// results that arrive meanwhile.
func (r *Router) wakeSoon(parent string) {
	r.subs.mu.Lock()
	defer r.subs.mu.Unlock()
	if _, ok := r.subs.wakes[parent]; ok {
		return
	}
	r.subs.wakes[parent] = time.AfterFunc(announceDebounce, func() {
		r.subs.mu.Lock()
		delete(r.subs.wakes, parent)
		r.subs.mu.Unlock()
		r.wake(context.Background(), parent)
	})
}

// firstWords cuts s to about n bytes at a word boundary, on one line.
func firstWords(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	if i := strings.LastIndex(s[:n], " "); i > n/2 {
		return s[:i] + "…"
	}
	return s[:n] + "…"
}
