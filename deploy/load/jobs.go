package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
)

// jobOptions are the flags of the jobs mode (-jobs N): N config jobs due
// every minute, run by -replicas daemons on one PostgreSQL and Redis, for
// -slots whole minutes.
type jobOptions struct {
	jobs, replicas, slots int
	basePort              int
	// killAt, when positive, kills the last replica (SIGKILL) this long
	// after the first measured slot: the others must take its runs over.
	killAt time.Duration
}

// slotKey names one slot of one job.
type slotKey struct {
	job  string
	slot time.Time
}

// jobTally records, per slot of each job, when the model was asked and
// how often, and how often its answer reached the chat.
type jobTally struct {
	mu        sync.Mutex
	requested map[slotKey][]time.Time
	delivered map[slotKey]int
}

// slotRE finds the job and slot in a job's prompt as the model sees it
// (quotes JSON-escaped or not) and in the echoed answer.
var slotRE = regexp.MustCompile(`scheduled job \\?"(j\d+)\\?", slot ([0-9TZ:-]+)\]`)

func parseSlot(text string) (slotKey, bool) {
	m := slotRE.FindStringSubmatch(text)
	if m == nil {
		return slotKey{}, false
	}
	t, err := time.Parse(time.RFC3339, m[2])
	if err != nil {
		return slotKey{}, false
	}
	return slotKey{job: m[1], slot: t}, true
}

func (t *jobTally) request(text string) {
	if k, ok := parseSlot(text); ok {
		t.mu.Lock()
		t.requested[k] = append(t.requested[k], time.Now())
		t.mu.Unlock()
	}
}

func (t *jobTally) deliver(text string) {
	if k, ok := parseSlot(text); ok {
		t.mu.Lock()
		t.delivered[k]++
		t.mu.Unlock()
	}
}

// jobsConfig writes a config file with n jobs due every minute, each
// posting to a chat of its own.
func jobsConfig(dir string, n int) (string, error) {
	var b strings.Builder
	b.WriteString("jobs:\n")
	for i := range n {
		fmt.Fprintf(&b, "  - name: j%05d\n    schedule: \"* * * * *\"\n    prompt: report\n    target: telegram:%d\n", i, 7_000_000+i)
	}
	path := filepath.Join(dir, "switchboard.yaml")
	return path, os.WriteFile(path, []byte(b.String()), 0o600)
}

// jobsResult is what the jobs mode measured over its slots.
type jobsResult struct {
	o                    jobOptions
	lag                  []time.Duration // first model request of each run − its slot
	expected, ran, twice int             // job slots due, run at least once, asked more than once
	delivered, dupes     int             // job slots whose answer arrived, arrived more than once
	replicaCPU           []time.Duration
	killed               int // the replica killed mid-slot, -1 for none
	postgres, pgBackends time.Duration
	redis                time.Duration
}

// runJobs starts the replicas on the fakes, waits for the next whole
// minute and tallies o.slots slots.
func runJobs(ctx context.Context, o options) (jobsResult, error) {
	jo := o.jobOpts
	tg := newLeanTelegram(token)
	defer tg.Close()
	model := newLeanModel()
	defer model.Close()
	tally := &jobTally{requested: map[slotKey][]time.Time{}, delivered: map[slotKey]int{}}
	model.onUser = tally.request
	tg.Watch(tally.deliver)
	dir, err := os.MkdirTemp("", "load-jobs-")
	if err != nil {
		return jobsResult{}, err
	}
	defer os.RemoveAll(dir)
	cfg, err := jobsConfig(dir, jo.jobs)
	if err != nil {
		return jobsResult{}, err
	}
	daemons, err := startReplicas(ctx, o, jo, dir, cfg, tg.URL(), model.URL())
	for _, d := range daemons {
		defer d.stop()
	}
	if err != nil {
		return jobsResult{}, err
	}
	first := time.Now().Truncate(time.Minute).Add(time.Minute)
	if time.Until(first) < 5*time.Second {
		first = first.Add(time.Minute) // let the replicas settle first
	}
	fmt.Fprintf(os.Stderr, "load: %d replicas ready; measuring the %d slots from %s\n", len(daemons), jo.slots, first.Format(time.TimeOnly))
	dbURL := os.Getenv("SWITCHBOARD_DATABASE_URL")
	before, pgBefore := sampleAll(daemons), dbBackends(dbURL)
	victim := -1
	var victimCPU time.Duration
	if jo.killAt > 0 {
		if err := sleepUntil(ctx, first.Add(jo.killAt)); err != nil {
			return jobsResult{}, err
		}
		victim = len(daemons) - 1
		victimCPU = sample(daemons[victim].pid()).daemon
		if err := daemons[victim].cmd.Process.Kill(); err != nil {
			return jobsResult{}, fmt.Errorf("kill replica %d: %w", victim, err)
		}
		fmt.Fprintf(os.Stderr, "load: killed replica %d at %s\n", victim, time.Now().Format(time.TimeOnly+".000"))
	}
	end := first.Add(time.Duration(jo.slots) * time.Minute)
	if err := sleepUntil(ctx, end.Add(-time.Second)); err != nil {
		return jobsResult{}, err
	}
	after, pgAfter := sampleAll(daemons), dbBackends(dbURL)
	if victim >= 0 {
		after[victim].daemon = victimCPU
	}
	// The last slot's answers may still be on their way.
	_ = sleepUntil(ctx, end.Add(10*time.Second))
	r := tally.result(jo, first)
	r.killed = victim
	for i := range daemons {
		r.replicaCPU = append(r.replicaCPU, after[i].daemon-before[i].daemon)
	}
	r.postgres, r.redis = after[0].postgres-before[0].postgres, after[0].redis-before[0].redis
	r.pgBackends = pgAfter.since(pgBefore)
	return r, nil
}

// startReplicas starts jo.replicas daemons on cfg, each with its own HTTP
// port and data directory, and waits until all are ready.
func startReplicas(ctx context.Context, o options, jo jobOptions, dir, cfg, tgURL, llmURL string) ([]*daemon, error) {
	var out []*daemon
	for i := range jo.replicas {
		listen := fmt.Sprintf("127.0.0.1:%d", jo.basePort+i)
		d, err := startDaemon(append(slices.Clone(o.command), "-config", cfg), []string{
			"SWITCHBOARD_TELEGRAM_TOKEN=" + token, "SWITCHBOARD_TELEGRAM_API_URL=" + tgURL,
			"SWITCHBOARD_LLM_BASE_URL=" + llmURL, "SWITCHBOARD_LLM_MODEL=test-model",
			"SWITCHBOARD_ACCESS_MODE=open", "SWITCHBOARD_RATELIMIT_USER=off", "SWITCHBOARD_RATELIMIT_CHAT=off",
			"SWITCHBOARD_HTTP_LISTEN=" + listen, "SWITCHBOARD_DATA_DIR=" + filepath.Join(dir, fmt.Sprintf("data%d", i)),
		})
		if err != nil {
			return out, err
		}
		out = append(out, d)
		if err := d.waitReady(ctx, "http://"+listen+"/readyz"); err != nil {
			return out, fmt.Errorf("replica %d: %w\n%s", i, err, d.out.String())
		}
	}
	return out, nil
}

// sampleAll samples each replica.
func sampleAll(daemons []*daemon) []usage {
	out := make([]usage, 0, len(daemons))
	for _, d := range daemons {
		out = append(out, sample(d.pid()))
	}
	return out
}

// backends is the CPU used so far by each PostgreSQL backend (by pid)
// serving one database.
type backends map[string]time.Duration

// dbBackends reads the CPU of the PostgreSQL backends whose process title
// names the database in dbURL (other databases on the server left out).
func dbBackends(dbURL string) backends {
	name := dbURL[strings.LastIndexByte(dbURL, '/')+1:]
	name, _, _ = strings.Cut(name, "?")
	out := backends{}
	if name == "" {
		return out
	}
	stats, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range stats {
		title, _ := os.ReadFile(p)
		// "postgres: [cluster:] user database host(port) state"
		f := strings.Fields(strings.ReplaceAll(string(title), "\x00", " "))
		for len(f) > 0 && strings.HasSuffix(f[0], ":") {
			f = f[1:]
		}
		if len(f) >= 2 && f[1] == name && strings.HasPrefix(string(title), "postgres:") {
			dir := strings.TrimSuffix(p, "cmdline")
			out[dir], _ = procCPU(dir+"stat", false)
		}
	}
	return out
}

// since is the CPU the backends used after before: a backend that started
// meanwhile counts whole, and one that exited meanwhile (a pool closing
// an idle connection) counts only up to before, rather than taking its
// whole past off the sum.
func (b backends) since(before backends) time.Duration {
	var sum time.Duration
	for pid, cpu := range b {
		sum += cpu - before[pid]
	}
	return sum
}

func sleepUntil(ctx context.Context, t time.Time) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Until(t)):
		return nil
	}
}

// result tallies the slots in [first, first+slots minutes).
func (t *jobTally) result(o jobOptions, first time.Time) jobsResult {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := jobsResult{o: o, expected: o.jobs * o.slots}
	in := func(k slotKey) bool {
		return !k.slot.Before(first) && k.slot.Before(first.Add(time.Duration(o.slots)*time.Minute))
	}
	for k, at := range t.requested {
		if !in(k) {
			continue
		}
		r.ran++
		r.lag = append(r.lag, at[0].Sub(k.slot)) // appended in order: the first request
		if len(at) > 1 {
			r.twice++
		}
	}
	for k, n := range t.delivered {
		if in(k) {
			r.delivered++
			if n > 1 {
				r.dupes++
			}
		}
	}
	slices.Sort(r.lag)
	return r
}

func (r jobsResult) print(w io.Writer) {
	fmt.Fprintf(w, "jobs %d, replicas %d, slots %d (one a minute)\n", r.o.jobs, r.o.replicas, r.o.slots)
	fmt.Fprintf(w, "runs per slot: %.3f (%d of %d job slots asked the model; %d asked more than once)\n",
		float64(r.ran)/float64(max(r.expected, 1)), r.ran, r.expected, r.twice)
	fmt.Fprintf(w, "delivered: %d of %d job slots (%d more than once)\n", r.delivered, r.expected, r.dupes)
	if len(r.lag) > 0 {
		fmt.Fprintf(w, "slot lag (slot → model request): p50 %.0f ms, p99 %.0f ms, max %.0f ms\n",
			ms(percentile(r.lag, 0.50)), ms(percentile(r.lag, 0.99)), ms(r.lag[len(r.lag)-1]))
	}
	per := func(d time.Duration) float64 { return d.Seconds() / float64(max(r.o.slots, 1)) }
	for i, c := range r.replicaCPU {
		if i == r.killed {
			fmt.Fprintf(w, "replica %d CPU: %.2f s until killed, %s into the first slot\n", i, c.Seconds(), r.o.killAt)
			continue
		}
		fmt.Fprintf(w, "replica %d CPU: %.2f s per slot\n", i, per(c))
	}
	fmt.Fprintf(w, "PostgreSQL CPU: %.2f s per slot (this run's backends), %.2f s per slot (whole server, other databases included)\n",
		per(r.pgBackends), per(r.postgres))
	if r.redis >= 0 {
		fmt.Fprintf(w, "Redis CPU: %.2f s per slot\n", per(r.redis))
	}
}
