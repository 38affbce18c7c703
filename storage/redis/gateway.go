package redis

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/channels/discord"
)

var _ discord.SessionStore = (*Store)(nil)

// Keys of the Discord gateway session hand-over: the session itself and
// the epoch counter that fences out a replica that lost the gateway.
const (
	gatewaySessionKey = "discord:gateway:session"
	gatewayEpochKey   = "discord:gateway:epoch"
)

// gatewaySessionTTL bounds how long a saved session is offered for
// resuming; Discord forgets idle sessions within minutes anyway.
const gatewaySessionTTL = 15 * time.Minute

var (
	claimGatewayScript = goredis.NewScript(`
local epoch = redis.call('INCR', KEYS[2])
return {epoch, redis.call('GET', KEYS[1]) or ''}`)
	saveGatewayScript = goredis.NewScript(`
local newest = tonumber(redis.call('GET', KEYS[2]) or '0')
if tonumber(ARGV[1]) < newest then return 0 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 1`)
)

// ClaimGatewaySession implements discord.SessionStore.
func (s *Store) ClaimGatewaySession(ctx context.Context) (discord.GatewaySession, int64, error) {
	res, err := claimGatewayScript.Run(ctx, s.scripts, []string{gatewaySessionKey, gatewayEpochKey}).Slice()
	if err != nil {
		return discord.GatewaySession{}, 0, fmt.Errorf("claim discord gateway session: %w", err)
	}
	if len(res) != 2 {
		return discord.GatewaySession{}, 0, errors.New("claim discord gateway session: unexpected reply")
	}
	epoch, _ := res[0].(int64)
	raw, _ := res[1].(string)
	var gs discord.GatewaySession
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &gs); err != nil {
			gs = discord.GatewaySession{} // unreadable: identify afresh
		}
	}
	return gs, epoch, nil
}

// SaveGatewaySession implements discord.SessionStore.
func (s *Store) SaveGatewaySession(ctx context.Context, epoch int64, gs discord.GatewaySession) error {
	raw, err := json.Marshal(gs)
	if err != nil {
		return err
	}
	saved, err := saveGatewayScript.Run(ctx, s.scripts, []string{gatewaySessionKey, gatewayEpochKey},
		epoch, string(raw), gatewaySessionTTL.Milliseconds()).Int()
	if err != nil {
		return fmt.Errorf("save discord gateway session: %w", err)
	}
	if saved == 0 {
		return errors.New("save discord gateway session: another replica holds the gateway now")
	}
	return nil
}
