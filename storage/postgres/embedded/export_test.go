package embedded

// What the external tests share with the internal ones.
var (
	// ReachableTempDir is authTestDir: a data directory the embedded
	// server's user can reach.
	ReachableTempDir = authTestDir
	// StartForTest is startForTest.
	StartForTest = startForTest
)
