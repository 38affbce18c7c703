package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

// idleResult is what an idle daemon and its PostgreSQL cost.
type idleResult struct {
	measured time.Duration
	cpu      usage         // used while measuring, all PostgreSQL processes in postgres
	backends time.Duration // used by the PostgreSQL backends serving this database
}

// runIdle starts the daemon on the seeded database, lets it settle (its
// start-up pass over every session, the first background passes), and
// measures the CPU it and PostgreSQL use while nothing happens.
func runIdle(ctx context.Context, o options) (idleResult, error) {
	if err := o.seed(ctx); err != nil {
		return idleResult{}, err
	}
	b, err := startBench(ctx, o)
	if err != nil {
		return idleResult{}, err
	}
	defer b.close()
	if err := sleepFor(ctx, o.settle); err != nil {
		return idleResult{}, err
	}
	dbURL := os.Getenv("SWITCHBOARD_DATABASE_URL")
	before, pgBefore := sample(b.d.pid()), dbBackends(dbURL)
	began := time.Now()
	if err := sleepFor(ctx, o.idle); err != nil {
		return idleResult{}, err
	}
	r := idleResult{measured: time.Since(began), cpu: sample(b.d.pid()).since(before), backends: dbBackends(dbURL).since(pgBefore)}
	return r, nil
}

// sleepFor waits d, or less when ctx ends first.
func sleepFor(ctx context.Context, d time.Duration) error {
	return sleepUntil(ctx, time.Now().Add(d))
}

// print writes the figures, one per line, as "name value unit", per
// minute of idling.
func (r idleResult) print(w io.Writer, o options) {
	perMin := func(d time.Duration) string {
		if d < 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f", ms(d)/r.measured.Minutes())
	}
	fmt.Fprintf(w, "# idle for %s after %s settling; %d seeded chats; CPU in %s ticks, per minute\n",
		r.measured.Round(time.Second), o.settle, o.seedSessions, clockTick)
	fmt.Fprintf(w, "daemon-cpu-ms/min %s\n", perMin(r.cpu.daemon))
	fmt.Fprintf(w, "db-backends-cpu-ms/min %s\n", perMin(r.backends))
	fmt.Fprintf(w, "pg-cpu-ms/min %s\n", perMin(r.cpu.postgres))
	fmt.Fprintf(w, "redis-cpu-ms/min %s\n", perMin(r.cpu.redis))
	fmt.Fprintf(w, "daemon-VmRSS-KiB %d\n", r.cpu.rss)
}
