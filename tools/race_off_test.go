//go:build !race

package tools

// raceEnabled: see race_on_test.go.
const raceEnabled = false
