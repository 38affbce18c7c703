package agentcore

import "time"

// EndCompactBackoff lets the backoffs of c's failed sessions run out now,
// as if their time had passed.
func EndCompactBackoff(c *Compactor) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for s, f := range c.failed {
		f.until = time.Now()
		c.failed[s] = f
	}
}

// CompactFailures is how many times in a row session's compaction failed.
func CompactFailures(c *Compactor, session string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed[session].times
}
