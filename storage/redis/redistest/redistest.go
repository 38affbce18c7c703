// Package redistest points tests at the real Redis and gives each test its
// own key prefix, cleaned up afterwards.
package redistest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// EnvURL names the environment variable holding the test Redis URL.
const EnvURL = "SWITCHBOARD_TEST_REDIS_URL"

// DefaultURL is used when EnvURL is unset.
const DefaultURL = "redis://127.0.0.1:6379/0"

// URL returns the test Redis URL after checking it answers PING. When Redis
// is unreachable the test is skipped, or fails when env CI=true.
func URL(t testing.TB) string {
	t.Helper()
	raw := os.Getenv(EnvURL)
	if raw == "" {
		raw = DefaultURL
	}
	client := connect(t, raw)
	defer client.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		msg := "redis at " + client.Options().Addr + " is unreachable: " + err.Error() +
			"; start Redis or set " + EnvURL
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return raw
}

// Prefix returns a key prefix unique to this test (e.g.
// "sbtest:TestLock:3f9a0c1b2d4e:") and deletes every key under it when the
// test ends. It skips like URL when Redis is unreachable.
func Prefix(t testing.TB) string {
	t.Helper()
	raw := URL(t)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatalf("redistest: random prefix: %v", err)
	}
	prefix := "sbtest:" + sanitize(t.Name()) + ":" + hex.EncodeToString(b[:]) + ":"
	t.Cleanup(func() {
		client := connect(t, raw)
		defer client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := client.Scan(ctx, 0, prefix+"*", 500).Iterator()
		var keys []string
		for iter.Next(ctx) {
			keys = append(keys, iter.Val())
		}
		if err := iter.Err(); err != nil {
			t.Errorf("redistest: scan keys under %q: %v", prefix, err)
			return
		}
		if len(keys) > 0 {
			if err := client.Del(ctx, keys...).Err(); err != nil {
				t.Errorf("redistest: delete keys under %q: %v", prefix, err)
			}
		}
	})
	return prefix
}

func connect(t testing.TB, raw string) *goredis.Client {
	t.Helper()
	opt, err := goredis.ParseURL(raw)
	if err != nil {
		// err may quote the URL, password included; name the shape instead.
		t.Fatalf("redistest: %s is not a valid Redis URL (want redis://[:password@]host:port/db)", EnvURL)
	}
	return goredis.NewClient(opt)
}

// sanitize keeps a test name usable inside a SCAN pattern: only letters,
// digits, '-' and '_' survive.
func sanitize(name string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			return r
		}
		return '_'
	}, name)
}
