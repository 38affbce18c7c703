//go:build race

package scrub

// raceEnabled: the race detector makes sync.Pool drop a share of what is
// put back, so pooled paths allocate now and then.
const raceEnabled = true
