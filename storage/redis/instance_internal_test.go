package redis

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	goredis "github.com/redis/go-redis/v9"
)

// setCounter counts the SET commands of one key.
type setCounter struct {
	key string
	n   atomic.Int32
}

func (c *setCounter) DialHook(next goredis.DialHook) goredis.DialHook { return next }

func (c *setCounter) ProcessHook(next goredis.ProcessHook) goredis.ProcessHook {
	return func(ctx context.Context, cmd goredis.Cmder) error {
		if args := cmd.Args(); len(args) > 1 && cmd.Name() == "set" && args[1] == c.key {
			c.n.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (c *setCounter) ProcessPipelineHook(next goredis.ProcessPipelineHook) goredis.ProcessPipelineHook {
	return next
}

// Steady traffic, a lock per message given back before the next, keeps one
// heartbeat a second: taking a lock while the heartbeat beats does not
// make it write again at once.
func TestHeartbeatIsNotRestartedPerLock(t *testing.T) {
	m := miniredis.RunT(t)
	ctx := context.Background()
	s, err := Open(ctx, "redis://"+m.Addr(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	sets := &setCounter{key: s.inst.key}
	s.client.AddHook(sets)
	start := time.Now()
	for range 50 {
		l, err := s.Obtain(ctx, "session:1", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Open's first beat may be counted (it runs on its own goroutine), the
	// first lock wakes the heartbeat (one write), and then it beats once a
	// second (about 0.3 s for the 50 here, longer on a busy machine).
	if n, most := sets.n.Load(), 3+int32(time.Since(start)/time.Second); n > most {
		t.Fatalf("the heartbeat wrote %d times for 50 locks in a row in %s; want at most %d", n, time.Since(start), most)
	}
}
