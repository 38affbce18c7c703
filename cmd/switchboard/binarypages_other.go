//go:build !linux

package main

// unmapBinaryPages does nothing here: dropping the binary's mappings is
// done on Linux only (binarypages_linux.go).
func unmapBinaryPages() (int64, error) { return 0, nil }
