package bot

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"
)

// Check reports whether one dependency is usable; nil means ready.
type Check func(ctx context.Context) error

// HTTPOptions configures the daemon's HTTP endpoints.
type HTTPOptions struct {
	// Checks name the dependencies /readyz checks: "postgres", "redis",
	// "telegram"…
	Checks map[string]Check
	// Metrics writes the metrics in the Prometheus text format; nil: no
	// /metrics.
	Metrics func(w io.Writer)
	// Webhooks are mounted under /webhooks/<platform>.
	Webhooks map[string]http.Handler
	// Admin, when set, serves /api/v1/ (the admin API, bot/admin).
	Admin http.Handler
	// Console, when set, serves /admin and everything under it (the admin
	// console, bot/console).
	Console http.Handler
	// Replica names this process in /readyz.
	Replica string
	// Leaderships, when set, lists the leader keys this replica holds, for
	// /readyz ("leader:telegram:poll").
	Leaderships func() []string
}

// NewHTTPHandler serves /healthz, /readyz, /metrics and webhooks.
func NewHTTPHandler(o HTTPOptions) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"ok"}` + "\n"))
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
		defer cancel()
		failed := RunChecks(ctx, o.Checks)
		body := map[string]any{"status": "ready"}
		code := http.StatusOK
		if len(failed) > 0 {
			code = http.StatusServiceUnavailable
			body = map[string]any{"status": "not ready", "not_ready": failed}
		}
		if o.Replica != "" {
			body["replica"] = o.Replica
		}
		if o.Leaderships != nil {
			body["leaderships"] = o.Leaderships()
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(body)
	})
	if o.Metrics != nil {
		mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
			o.Metrics(w)
		})
	}
	if o.Admin != nil {
		mux.Handle("/api/v1/", o.Admin)
	}
	if o.Console != nil {
		mux.Handle("/admin", o.Console)
		mux.Handle("/admin/", o.Console)
	}
	for platform, h := range o.Webhooks {
		mux.Handle("/webhooks/"+platform, h)
	}
	return mux
}

// RunChecks runs every check concurrently and returns the failures by name
// (sorted map order is irrelevant; the JSON encoder sorts keys).
func RunChecks(ctx context.Context, checks map[string]Check) map[string]string {
	var mu sync.Mutex
	failed := map[string]string{}
	var wg sync.WaitGroup
	for name, c := range checks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c(ctx); err != nil {
				mu.Lock()
				failed[name] = err.Error()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failed
}

// StatusLines renders check results as "name: ok" / "name: DOWN (why)",
// sorted by name, for /status and doctor.
func StatusLines(ctx context.Context, checks map[string]Check) []string {
	failed := RunChecks(ctx, checks)
	names := make([]string, 0, len(checks))
	for n := range checks {
		names = append(names, n)
	}
	sort.Strings(names)
	lines := make([]string, 0, len(names))
	for _, n := range names {
		if why, bad := failed[n]; bad {
			lines = append(lines, n+": DOWN ("+why+")")
		} else {
			lines = append(lines, n+": ok")
		}
	}
	return lines
}
