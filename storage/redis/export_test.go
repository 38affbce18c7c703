package redis

import (
	"context"
	"slices"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// StopHeartbeat ends the instance heartbeat without removing its key, as
// kill -9 would; tests use it to play a crashed process.
func (s *Store) StopHeartbeat() { s.stopBeating() }

// SetMailReclaim shortens how long an unconfirmed mailbox read waits
// before it is delivered again, and returns the old value.
func SetMailReclaim(d time.Duration) time.Duration {
	old := mailReclaim
	mailReclaim = d
	return old
}

// ScriptCall is a script call a store made, as WatchScripts saw it.
type ScriptCall struct {
	Many bool     // for more than one lock
	Keys []string // its keys, prefix included
}

// ScriptWatch records a store's lock obtains.
type ScriptWatch struct {
	mu    sync.Mutex
	calls []ScriptCall
}

// Calls returns the obtains made so far.
func (w *ScriptWatch) Calls() []ScriptCall {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.calls)
}

// FailGroups says which of a store's group obtain calls WatchObtains makes
// fail, with an error reply.
type FailGroups struct {
	N int // the first N group calls fail
	// AfterRedis lets the failing calls run in Redis and loses only their
	// answers; otherwise they fail without reaching Redis.
	AfterRedis bool
}

// WatchObtains records the store's obtain script calls from now on. The
// first waits until gate closes; group calls fail as fail says.
func (s *Store) WatchObtains(gate <-chan struct{}, fail FailGroups) *ScriptWatch {
	failMany := fail.N
	w := &ScriptWatch{}
	sha := obtainScript.Hash()
	s.client.AddHook(scriptHook{func(next goredis.ProcessHook) goredis.ProcessHook {
		return func(ctx context.Context, cmd goredis.Cmder) error {
			args := cmd.Args()
			if len(args) < 4 || args[1] != sha {
				return next(ctx, cmd)
			}
			n, _ := args[2].(int)
			locks, _ := args[3+n].(int) // ARGV[1]
			call := ScriptCall{Many: locks > 1}
			for _, k := range args[3 : 3+n] {
				call.Keys = append(call.Keys, k.(string))
			}
			w.mu.Lock()
			w.calls = append(w.calls, call)
			first := len(w.calls) == 1
			failing := call.Many && failMany > 0
			if failing {
				failMany--
			}
			w.mu.Unlock()
			if first {
				<-gate
			}
			if !failing {
				return next(ctx, cmd)
			}
			if fail.AfterRedis {
				if err := next(ctx, cmd); err != nil {
					return err
				}
			}
			err := injectedError{}
			cmd.SetErr(err)
			return err
		}
	}})
	return w
}

// ObtainsWaiting reports how many Obtain calls wait for the group in
// flight.
func (s *Store) ObtainsWaiting() int { return s.obtains.Waiting() }

// scriptHook is a go-redis hook that wraps only commands.
type scriptHook struct {
	process func(goredis.ProcessHook) goredis.ProcessHook
}

func (h scriptHook) DialHook(next goredis.DialHook) goredis.DialHook { return next }
func (h scriptHook) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return h.process(next)
}
func (h scriptHook) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// injectedError is an error reply from Redis (a script that failed, or an
// answer lost), which WatchObtains makes the group's call get.
type injectedError struct{}

func (injectedError) Error() string { return "ERR injected: the group's script call failed" }
func (injectedError) RedisError()   {}
