package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// replicaSet is several daemons on one PostgreSQL and Redis, each with
// its own directory and HTTP address, restartable in place.
type replicaSet struct {
	t     *testing.T
	base  map[string]string
	procs []*daemonProc
	dirs  []string
	addrs []string
}

// startReplicas starts n replicas on base's stores and waits until each
// is ready.
func startReplicas(ctx context.Context, t *testing.T, base map[string]string, n int) *replicaSet {
	t.Helper()
	rs := &replicaSet{t: t, base: base}
	for i := range n {
		rs.dirs = append(rs.dirs, t.TempDir())
		rs.addrs = append(rs.addrs, freeAddr(t))
		rs.procs = append(rs.procs, nil)
		rs.start(ctx, i)
	}
	return rs
}

// start (re)starts replica i on its directory and address.
func (rs *replicaSet) start(ctx context.Context, i int) {
	rs.t.Helper()
	env := maps.Clone(rs.base)
	env["SWITCHBOARD_HTTP_LISTEN"] = rs.addrs[i]
	env["SWITCHBOARD_DATA_DIR"] = filepath.Join(rs.dirs[i], "data")
	env["SWITCHBOARD_REPLICA"] = fmt.Sprintf("replica-%d", i)
	rs.procs[i] = startDaemon(rs.t, rs.dirs[i], rs.addrs[i], env)
	rs.procs[i].waitReady(ctx)
}

// readyz decodes replica i's /readyz.
func (rs *replicaSet) readyz(i int) (replica string, leaderships []string) {
	_, body := rs.procs[i].get("/readyz")
	var v struct {
		Replica     string   `json:"replica"`
		Leaderships []string `json:"leaderships"`
	}
	_ = json.Unmarshal([]byte(body), &v)
	return v.Replica, v.Leaderships
}

// leader waits until exactly one live replica holds key and returns it.
func (rs *replicaSet) leader(ctx context.Context, key string, dead ...int) int {
	rs.t.Helper()
	for {
		var holders []int
		for i := range rs.procs {
			if slices.Contains(dead, i) {
				continue
			}
			if _, held := rs.readyz(i); slices.Contains(held, key) {
				holders = append(holders, i)
			}
		}
		if len(holders) == 1 {
			return holders[0]
		}
		select {
		case <-ctx.Done():
			rs.t.Fatalf("%s held by replicas %v, want exactly one", key, holders)
		case <-time.After(50 * time.Millisecond):
		}
	}
}
