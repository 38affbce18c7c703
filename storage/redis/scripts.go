package redis

import (
	"context"

	goredis "github.com/redis/go-redis/v9"
)

// prefixedScripter hands Lua scripts (redis_rate's and the store's locks)
// a client that puts the store's prefix in front of every key they use, so
// all of switchboard's keys share one prefix.
type prefixedScripter struct {
	client *goredis.Client
	prefix string
}

func (p prefixedScripter) keys(keys []string) []string {
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = p.prefix + k
	}
	return out
}

// Eval runs script with prefixed keys.
func (p prefixedScripter) Eval(ctx context.Context, script string, keys []string, args ...any) *goredis.Cmd {
	return p.client.Eval(ctx, script, p.keys(keys), args...)
}

// EvalRO runs a read-only script with prefixed keys.
func (p prefixedScripter) EvalRO(ctx context.Context, script string, keys []string, args ...any) *goredis.Cmd {
	return p.client.EvalRO(ctx, script, p.keys(keys), args...)
}

// EvalSha runs a cached script with prefixed keys.
func (p prefixedScripter) EvalSha(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd {
	return p.client.EvalSha(ctx, sha1, p.keys(keys), args...)
}

// EvalShaRO runs a cached read-only script with prefixed keys.
func (p prefixedScripter) EvalShaRO(ctx context.Context, sha1 string, keys []string, args ...any) *goredis.Cmd {
	return p.client.EvalShaRO(ctx, sha1, p.keys(keys), args...)
}

// ScriptExists reports which scripts are cached.
func (p prefixedScripter) ScriptExists(ctx context.Context, hashes ...string) *goredis.BoolSliceCmd {
	return p.client.ScriptExists(ctx, hashes...)
}

// ScriptLoad caches script.
func (p prefixedScripter) ScriptLoad(ctx context.Context, script string) *goredis.StringCmd {
	return p.client.ScriptLoad(ctx, script)
}

// Del deletes prefixed keys.
func (p prefixedScripter) Del(ctx context.Context, keys ...string) *goredis.IntCmd {
	return p.client.Del(ctx, p.keys(keys)...)
}
