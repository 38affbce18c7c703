//go:build !linux

package main

// releaseStartupCode does nothing here: dropping the binary's mappings
// after start-up is done on Linux only (startupcode_linux.go).
func releaseStartupCode() (int64, error) { return 0, nil }
