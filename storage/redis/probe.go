package redis

import (
	"context"
	"fmt"

	goredis "github.com/redis/go-redis/v9"
)

// Probe asks the Redis at url for one PING and closes the connection: a
// setup check's prompt answer (switchboard doctor). Unlike a Store's Ping it
// retries neither the command nor the dial (go-redis otherwise tries a
// command four times and dials five times for each), so a refused
// connection is reported at once; and it leaves nothing behind in Redis
// (Open starts the instance heartbeat). The password in url never appears
// in its errors.
func Probe(ctx context.Context, url string) error {
	o, err := parseURL(url)
	if err != nil {
		return err
	}
	o.MaxRetries = -1 // go-redis: -1, not 0, turns retries off
	o.DialerRetries = 1
	client := goredis.NewClient(o)
	defer client.Close()
	if err := client.Ping(ctx).Err(); err != nil {
		return unreachable(o.Addr, err)
	}
	return nil
}

// unreachable is the error for a Redis at addr that did not answer.
func unreachable(addr string, err error) error {
	return fmt.Errorf("redis at %s is unreachable: %w (check redis.url and that Redis is running)", addr, err)
}
