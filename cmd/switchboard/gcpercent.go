package main

// defaultGCPercent is the collector's GOGC when the environment does not
// set one. The Go runtime's 100 lets the heap grow to twice the live data,
// and no less than 4 MiB, before each collection; a daemon whose live heap
// is a few MiB then collects every 4–8 MiB of allocation, dozens of times a
// second under load, and each collection scans the stacks of every kept
// worker. 200 (three times the live data, at least 8 MiB) halves the
// collections: on a 2-core machine 10–18 % less of the daemon's CPU per
// message at 200 in flight and a p99 at one in flight of 4.6–4.7 ms instead
// of 5.8–7.0, for ~6 MiB more memory under load (docs/benchmarks.md,
// fourteenth round). An idle daemon is unaffected: it allocates far less
// than the minimum goal between its trims (idletrim.go).
const defaultGCPercent = 200

// gcPercent returns the GOGC the daemon sets and whether to set it: none
// when GOGC is in the environment (the runtime has read it), else
// defaultGCPercent.
func gcPercent(getenv func(string) string) (int, bool) {
	if getenv("GOGC") != "" {
		return 0, false
	}
	return defaultGCPercent, true
}
