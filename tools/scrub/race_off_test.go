//go:build !race

package scrub

// raceEnabled: see race_on_test.go.
const raceEnabled = false
