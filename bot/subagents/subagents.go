package subagents

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Subagent defaults (subagents: in the config).
const (
	DefaultConcurrency = 8
	DefaultDepth       = 1
	DefaultChildren    = 5
	DefaultArchive     = 60 * time.Minute
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

// Slot is what Store.AcquireSubagent saw: whether it took a slot, and the
// counts (including the new one when it did).
type Slot struct {
	Got               bool
	Running, Children int
}

// Store keeps what every replica must see of subagents (Redis implements
// it): running slots with leases, the records spawn list shows, and cancel
// requests.
type Store interface {
	AcquireSubagent(ctx context.Context, id, parent string, maxRunning, maxChildren int, lease time.Duration) (Slot, error)
	RefreshSubagent(ctx context.Context, id, parent string, lease time.Duration) error
	ReleaseSubagent(ctx context.Context, id, parent string) error
	SaveSubagent(ctx context.Context, s tools.Subagent, keep time.Duration) error
	Subagents(ctx context.Context, parent string) ([]tools.Subagent, error)
	Subagent(ctx context.Context, parent, id string) (tools.Subagent, bool, error)
	RequestCancel(ctx context.Context, id string) error
	CancelRequested(ctx context.Context, id string) (bool, error)
}

// Sessions is what subagents need of the pipeline (the Router): handing
// a task or a result into a session, waking a session, and whether a chat
// is served here.
type Sessions interface {
	HandOver(ctx context.Context, session, text, externalID string, wake bool) bool
	Wake(ctx context.Context, session string)
	Serves(addr channels.Address) bool
}

// Options bounds subagents; zero values take the defaults. A nil Store
// turns subagents off.
type Options struct {
	Store         Store
	MaxConcurrent int // running at once across all replicas
	MaxDepth      int // how deep subagents may nest
	MaxChildren   int // running at once per parent session
	ArchiveAfter  time.Duration
	// History is where a subagent's end is noted in its session.
	History agentcore.History
	Logger  *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = DefaultConcurrency
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultDepth
	}
	if o.MaxChildren <= 0 {
		o.MaxChildren = DefaultChildren
	}
	if o.ArchiveAfter <= 0 {
		o.ArchiveAfter = DefaultArchive
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Service spawns, lists and cancels subagents (tools.Spawner, for the
// spawn tool) and owns their sessions' runs (bot.SessionOwner). It keeps
// this replica's view: the runs here (to cancel them at once and to hand
// results to waiting parents) and the pending parent wake-ups.
type Service struct {
	o        Options
	sessions Sessions
	log      *slog.Logger

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // by id
	waiters map[string]chan struct{}           // by id: a parent waits (spawn run)
	wakes   map[string]*time.Timer             // by parent session
}

var (
	_ tools.Spawner    = (*Service)(nil)
	_ bot.SessionOwner = (*Service)(nil)
)

// New returns a Service that hands work to sessions through s (the
// Router). Pass it to Router.RunInBackground.
func New(s Sessions, o Options) *Service {
	o = o.withDefaults()
	return &Service{o: o, sessions: s, log: o.Logger, running: map[string]context.CancelCauseFunc{},
		waiters: map[string]chan struct{}{}, wakes: map[string]*time.Timer{}}
}

// Spawn implements tools.Spawner.
func (s *Service) Spawn(ctx context.Context, call tools.Call, task, label string, wait bool) (tools.Subagent, error) {
	o := s.o
	if o.Store == nil {
		return tools.Subagent{}, fmt.Errorf("%w: subagents are off here", tools.ErrSubagentLimit)
	}
	parent := call.Session
	if depth := tools.SubDepth(parent); depth >= o.MaxDepth {
		return tools.Subagent{}, fmt.Errorf("%w: you are a subagent at depth %d and subagents may nest only %d deep "+
			"(subagents.max_depth); do this part yourself", tools.ErrSubagentLimit, depth, o.MaxDepth)
	}
	to, err := channels.ParseAddress(tools.OriginOf(parent))
	if err != nil || !s.sessions.Serves(to) {
		return tools.Subagent{}, fmt.Errorf("%w: subagents run only for a chat conversation served here", tools.ErrSubagentLimit)
	}
	id := bot.ShortID()
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
			s.log.Warn("subagent slot not released; its lease ends it", "subagent", id, "err", err)
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
		s.mu.Lock()
		s.waiters[id] = done
		s.mu.Unlock()
		defer func() {
			s.mu.Lock()
			delete(s.waiters, id)
			s.mu.Unlock()
		}()
	}
	if !s.sessions.HandOver(ctx, session, text, "sub-task:"+id, true) {
		release()
		sub.Status, sub.Result, sub.Finished = tools.SubFailed, "could not be started (storage unavailable)", time.Now()
		_ = o.Store.SaveSubagent(ctx, sub, o.ArchiveAfter)
		return sub, fmt.Errorf("store the subagent's task: storage unavailable")
	}
	s.log.Info("subagent spawned", "subagent", id, "parent", parent, "sync", wait)
	if !wait {
		return sub, nil
	}
	return s.awaitSub(ctx, parent, id, done, sub)
}

// awaitSub waits for a subagent the parent runs synchronously: its end on
// this replica signals done; a store check every few seconds covers a
// run that recovery moved elsewhere.
func (s *Service) awaitSub(ctx context.Context, parent, id string, done chan struct{}, sub tools.Subagent) (tools.Subagent, error) {
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	deadline := time.After(bot.MaxRunDuration)
	for {
		select {
		case <-done:
		case <-tick.C:
		case <-deadline:
			return sub, fmt.Errorf("the subagent did not finish within %s; it goes on and announces its result", bot.MaxRunDuration)
		}
		got, ok, err := s.o.Store.Subagent(ctx, parent, id)
		if err == nil && ok && got.Status != tools.SubRunning {
			return got, nil
		}
	}
}

// Subagents implements tools.Spawner: running ones, and finished ones
// until they are archived (ArchiveAfter after they ended).
func (s *Service) Subagents(ctx context.Context, call tools.Call) ([]tools.Subagent, error) {
	if s.o.Store == nil {
		return nil, nil
	}
	all, err := s.o.Store.Subagents(ctx, call.Session)
	cutoff := time.Now().Add(-s.o.ArchiveAfter)
	return slices.DeleteFunc(all, func(s tools.Subagent) bool {
		return s.Status != tools.SubRunning && s.Finished.Before(cutoff)
	}), err
}

// CancelSubagents implements tools.Spawner. A run on this replica stops at
// once; one elsewhere within a second (it polls for the request).
func (s *Service) CancelSubagents(ctx context.Context, call tools.Call, which string) ([]tools.Subagent, error) {
	o := s.o
	if o.Store == nil {
		return nil, nil
	}
	all, err := o.Store.Subagents(ctx, call.Session)
	if err != nil {
		return nil, err
	}
	var out []tools.Subagent
	for i, sub := range all { // newest first
		if sub.Status != tools.SubRunning {
			continue
		}
		if which != "all" && which != sub.ID && !(which == "last" && i == firstRunning(all)) {
			continue
		}
		if err := o.Store.RequestCancel(ctx, sub.ID); err != nil {
			return out, err
		}
		s.mu.Lock()
		cancel := s.running[sub.ID]
		s.mu.Unlock()
		if cancel != nil {
			cancel(bot.ErrRunCancelled) // the parent asked (not a shutdown)
		}
		out = append(out, sub)
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

// Owns implements bot.SessionOwner: the subagent sessions.
func (s *Service) Owns(session string) bool {
	_, _, ok := tools.ParseSubScope(tools.ScopeOf(session))
	return ok
}

// Start implements bot.SessionOwner: it prepares a lane run of a subagent
// session: a context its cancel request ends (with bot.ErrRunCancelled),
// its slot's lease kept alive, and the subagent tool limits for the run.
// stop must be called when the run ends.
func (s *Service) Start(ctx context.Context, session string, in *agentcore.RunInput) (context.Context, func()) {
	id, parent, _ := tools.ParseSubScope(tools.ScopeOf(session))
	o := s.o
	deny := slices.Clone(tools.SubagentDeny)
	if tools.SubDepth(session) >= o.MaxDepth {
		deny = append(deny, tools.LeafDeny...)
	}
	in.Allow = func(t tools.Tool) bool { return !slices.Contains(deny, t.Name()) }
	in.MaxIterations = subagentIterations
	ctx, cancel := context.WithCancelCause(ctx)
	s.mu.Lock()
	s.running[id] = cancel
	s.mu.Unlock()
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
				cancel(bot.ErrRunCancelled)
			}
			if time.Since(refresh) >= subagentLease/3 {
				refresh = time.Now()
				if err := o.Store.RefreshSubagent(ctx, id, parent, subagentLease); err != nil && ctx.Err() == nil {
					s.log.Debug("subagent slot not refreshed", "subagent", id, "err", err)
				}
			}
		}
	}()
	return ctx, func() {
		close(stopped)
		wg.Wait()
		cancel(nil)
		s.mu.Lock()
		delete(s.running, id)
		s.mu.Unlock()
	}
}

// Finished implements bot.SessionOwner: a subagent's completed, failed or
// cancelled run ends it (finishSub); a parked one gives up its slot.
func (s *Service) Finished(ctx context.Context, session string, out bot.Outcome) {
	switch out.End {
	case bot.RunCompleted:
		s.finishSub(ctx, session, tools.SubCompleted, out.Text)
	case bot.RunParked:
		s.parkSub(ctx, session) // waiting for a human is not running
	case bot.RunFailed:
		s.finishSub(ctx, session, tools.SubFailed, fmt.Sprintf("failed: %s (error id %s)", out.Reason, out.ErrorID))
	case bot.RunCancelled:
		s.finishSub(ctx, session, tools.SubCancelled, "cancelled by the agent that spawned it")
	}
}

// finishSub records a subagent's end and gives its result to the parent:
// straight to a parent waiting on this replica, else as a message in the
// parent session (stored before the parent is woken; several results
// close together wake it once). A note in the subagent's session then
// marks it finished, so recovery leaves it alone. Repeating it (recovery
// after a crash) announces nothing twice.
func (s *Service) finishSub(ctx context.Context, session, status, result string) {
	ctx = context.WithoutCancel(ctx)
	id, parent, ok := tools.ParseSubScope(tools.ScopeOf(session))
	o := s.o
	if !ok || o.Store == nil {
		return
	}
	if err := o.Store.ReleaseSubagent(ctx, id, parent); err != nil {
		s.log.Warn("subagent slot not released; its lease ends it", "subagent", id, "err", err)
	}
	sub, found, err := o.Store.Subagent(ctx, parent, id)
	if err != nil || !found {
		sub = tools.Subagent{ID: id, Parent: parent, Label: id, Started: time.Now()}
	}
	s.mu.Lock()
	waiter := s.waiters[id]
	delete(s.waiters, id) // closed once, below
	s.mu.Unlock()
	// In this order, so that a crash anywhere leaves something recovery
	// completes, and whoever sees the record finished finds the session
	// finished too: the result reaches the parent (idempotent), the
	// session is marked ended, then the record says so.
	announced := false
	if waiter == nil && status != tools.SubCancelled { // a cancel was the parent's own doing
		text := fmt.Sprintf("[Subagent %s (%s) %s]\n%s", sub.Label, id, status, result)
		if !s.sessions.HandOver(ctx, parent, text, "sub-result:"+id, false) {
			return // the subagent's session stays unfinished: recovery tries again
		}
		announced = true
	}
	note := agentcore.Message{Role: agentcore.RoleAssistant, Content: "(" + status + "; reported to " + tools.AgentOf(parent) + ")",
		ExternalID: "sub-end:" + id}
	if _, err := s.o.History.Append(ctx, session, note); err != nil && !errors.Is(err, agentcore.ErrDuplicate) {
		s.log.Warn("subagent end not noted; recovery may announce it again (recognised)", "subagent", id, "err", err)
	}
	sub.Status, sub.Result, sub.Finished = status, result, time.Now()
	if err := o.Store.SaveSubagent(ctx, sub, o.ArchiveAfter); err != nil {
		s.log.Warn("subagent record not updated", "subagent", id, "err", err)
	}
	if waiter != nil {
		close(waiter)
	}
	if announced {
		s.wakeSoon(parent)
	}
	s.log.Info("subagent ended", "subagent", id, "status", status)
}

// parkSub gives up the running slot of a subagent whose run waits for an
// approval; the decision resumes it without one.
func (s *Service) parkSub(ctx context.Context, session string) {
	id, parent, ok := tools.ParseSubScope(tools.ScopeOf(session))
	if !ok || s.o.Store == nil {
		return
	}
	if err := s.o.Store.ReleaseSubagent(context.WithoutCancel(ctx), id, parent); err != nil {
		s.log.Warn("subagent slot not released; its lease ends it", "subagent", id, "err", err)
	}
}

// wakeSoon wakes a parent session after announceDebounce, once for all
// results that arrive meanwhile.
func (s *Service) wakeSoon(parent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.wakes[parent]; ok {
		return
	}
	s.wakes[parent] = time.AfterFunc(announceDebounce, func() {
		s.mu.Lock()
		delete(s.wakes, parent)
		s.mu.Unlock()
		s.sessions.Wake(context.Background(), parent)
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
