package redis

import (
	"context"
	"fmt"
	"log/slog"

	goredis "github.com/redis/go-redis/v9"
)

// RouteLibraryLogs sends go-redis's own log lines (dial failures and the
// like) to logger at debug level instead of stderr. go-redis keeps its
// logger in a package variable, so this affects the whole process: call it
// once, from main.
func RouteLibraryLogs(logger *slog.Logger) {
	goredis.SetLogger(libLogger{logger})
}

type libLogger struct{ l *slog.Logger }

func (g libLogger) Printf(ctx context.Context, format string, v ...any) {
	g.l.DebugContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}
