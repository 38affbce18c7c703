package redis

import (
	"context"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

const (
	// obtainMax caps how many Obtain calls one script call carries.
	obtainMax = 64
	// obtainGroupTimeout bounds a group of obtains in flight. It does not
	// end with the context of the caller that sends it: one caller giving
	// up must not leave the others' locks in doubt.
	obtainGroupTimeout = 10 * time.Second
)

// obtainCall is one Obtain's part of a group: the lock it asks for and,
// once the group has run, the script's answer for it (0 held by a live
// owner, 1 taken, 2 taken over).
type obtainCall struct {
	key, value string
	ttl        time.Duration
	res        int
	grouped    bool // sent in a group of more than one
}

// obtainScript takes n locks (ARGV[1]; a lone Obtain is n = 1). For each
// lock i in 1…n it takes KEYS[i+1]
// for ARGV[2i+4] ms with the value ARGV[2i+3] when it is free or its owner
// instance's heartbeat (ARGV[2]..owner) is gone, renewing this instance's
// heartbeat KEYS[1] (ARGV[4] for ARGV[3] ms) before the first lock it
// takes, so no lock it sets is ownerless. It returns each lock's answer: 0
// when held by a live owner (this instance included), 1 when taken, 2 when
// taken over from a gone owner. A lock that already holds the value asked
// for is taken: that value is this very call's (its token is random), so
// an earlier try of the call took it and its answer was lost; the retry
// must get the lock, not be refused by it and leave it held until its TTL.
var obtainScript = goredis.NewScript(`
local n = tonumber(ARGV[1])
local out = {}
local beating = false
for i = 1, n do
  local key = KEYS[i + 1]
  local cur = redis.call('GET', key)
  local res = 1
  if cur == ARGV[2 * i + 3] then
    res = 1
  elseif cur then
    local owner = string.match(cur, '^(%x+):')
    if not owner or redis.call('EXISTS', ARGV[2] .. owner) == 1 then
      res = 0
    else
      res = 2
    end
  end
  if res > 0 then
    if not beating then
      redis.call('SET', KEYS[1], ARGV[4], 'PX', ARGV[3])
      beating = true
    end
    redis.call('SET', key, ARGV[2 * i + 3], 'PX', ARGV[2 * i + 4])
  end
  out[i] = res
end
return out`)

// sendObtains is the obtains group's send. A lone call goes under its
// caller's ctx, as it would without the group; two or more go in one
// script call that does not end with its sender's cancellation. A failed
// group's calls then run alone (Obtain), each telling its own failure.
func (s *Store) sendObtains(ctx context.Context, calls []*obtainCall) error {
	if len(calls) > 1 {
		for _, c := range calls {
			c.grouped = true
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), obtainGroupTimeout)
		defer cancel()
	}
	return s.obtain(ctx, calls)
}

// obtain sends calls in one obtainScript call and sets each call's answer.
func (s *Store) obtain(ctx context.Context, calls []*obtainCall) error {
	keys := make([]string, 0, 1+len(calls))
	args := make([]any, 0, 4+2*len(calls))
	keys = append(keys, instanceKey(s.inst.id))
	args = append(args, len(calls), s.prefix+instanceKey(""), s.inst.ttl.Milliseconds(), s.inst.label)
	for _, c := range calls {
		keys = append(keys, "lock:"+c.key)
		args = append(args, c.value, c.ttl.Milliseconds())
	}
	res, err := obtainScript.Run(ctx, s.scripts, keys, args...).Int64Slice()
	if err == nil && len(res) != len(calls) {
		err = fmt.Errorf("obtain %d locks: the script answered %d", len(calls), len(res))
	}
	if err != nil {
		return err
	}
	for i, c := range calls {
		c.res = int(res[i])
	}
	return nil
}
