package redis

import (
	"errors"
	"fmt"
	"net/url"

	goredis "github.com/redis/go-redis/v9"
)

// parseURL turns a Redis URL into client options. Its errors never contain
// the URL's password.
func parseURL(raw string) (*goredis.Options, error) {
	if raw == "" {
		return nil, errors.New("redis url is empty: set redis.url (e.g. redis://127.0.0.1:6379/0) or use the in-process Redis")
	}
	if _, err := url.Parse(raw); err != nil {
		// url.Error repeats the whole URL, password included: say only
		// what shape is expected.
		return nil, fmt.Errorf("redis url is not a valid URL: expected redis://[user:password@]host:port[/db]")
	}
	o, err := goredis.ParseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("redis url %s: %w", redactURL(raw), err)
	}
	o.ReadBufferSize, o.WriteBufferSize = connBufferSize, connBufferSize
	o.PipelineReadBufferSize, o.PipelineWriteBufferSize = connBufferSize, connBufferSize
	return o, nil
}

// connBufferSize sizes each Redis connection's read and write buffers.
// go-redis defaults to 32 KiB (128 KiB for pipelines), made for large
// values and long pipelines; this store sends small commands (locks,
// counters, routes, mail of a few KB) and pipelines of two or three, so
// 4 KiB each saves 56 KiB per connection and 248 KiB per pipeline
// connection. Larger replies and values still pass: the
// buffer is refilled, not a limit.
const connBufferSize = 4 << 10

// redactURL returns raw with any password replaced by "xxxxx".
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparseable URL)"
	}
	return u.Redacted()
}
