package bot_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

type brokenLimiter struct{}

func (brokenLimiter) Allow(context.Context, string, bot.Rate) (bool, time.Duration, error) {
	return false, 0, errors.New("redis unreachable")
}

func TestToolRate(t *testing.T) {
	ctx := context.Background()
	rdb, err := redis.Open(ctx, redistest.URL(t), redis.Options{Prefix: redistest.Prefix(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer rdb.Close()
	limit := bot.ToolRate{Limiter: rdb, Rate: bot.Rate{Count: 2, Per: time.Minute}}
	for i, want := range []bool{true, true, false} {
		if ok, err := limit.Allow(ctx, "a/telegram:1"); err != nil || ok != want {
			t.Fatalf("call %d in session 1: %v, %v; want %v", i+1, ok, err, want)
		}
	}
	if ok, err := limit.Allow(ctx, "a/telegram:2"); err != nil || !ok {
		t.Fatalf("another session shares the bucket: %v, %v", ok, err)
	}
	if ok, err := (bot.ToolRate{Limiter: brokenLimiter{}, Rate: bot.Rate{Count: 1, Per: time.Minute}}).Allow(ctx, "s"); !ok || err != nil {
		t.Fatalf("with the limiter down calls must go through: %v, %v", ok, err)
	}
}
