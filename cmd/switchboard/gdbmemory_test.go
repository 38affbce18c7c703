package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// gdbMemoryTarget is a program whose memory deploy/gdb-memory.py reads:
// objects of many sizes, twenty 800-byte slices of pointers (objects that
// carry their type), three goroutines parked on a channel, and a function
// to stop in once they exist.
const gdbMemoryTarget = `package main

import "runtime"

var (
	keep [][]byte
	ptrs [][]*byte
	park = make(chan struct{})
)

//go:noinline
func measured() {}

func main() {
	for i := 0; i < 2000; i++ {
		keep = append(keep, make([]byte, 16+i%700))
	}
	for i := 0; i < 20; i++ {
		ptrs = append(ptrs, make([]*byte, 100))
	}
	for i := 0; i < 3; i++ {
		go func() { <-park }()
	}
	runtime.Gosched()
	measured()
}
`

// TestGDBMemoryScriptReadsTheRuntime runs deploy/gdb-memory.py against a
// program built with this Go, stopped once its heap and goroutines exist:
// the script reads the runtime's own structures by their field names, so a
// Go release that renames them must fail here, not when someone needs the
// figures.
func TestGDBMemoryScriptReadsTheRuntime(t *testing.T) {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI must run this test: gdb is missing (.ci/run installs it)")
		}
		t.Skip("SKIPPED LOUDLY: no gdb here; install the gdb package to run this test")
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "deploy", "gdb-memory.py"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(gdbMemoryTarget), 0o600); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", "target", "main.go")
	build.Dir = dir
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the target: %v\n%s", err, out)
	}
	cmd := exec.Command(gdb, "-batch", "-nx",
		"-ex", "break main.measured", "-ex", "run", "-x", script,
		"--args", filepath.Join(dir, "target"))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gdb: %v\n%s", err, out)
	}
	report := string(out)
	atLeast := func(re string, mins ...int) {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(report)
		if m == nil {
			t.Fatalf("no line matching %q in the script's report:\n%s", re, report)
		}
		for i, min := range mins {
			if n, _ := strconv.Atoi(m[i+1]); n < min {
				t.Errorf("%q: figure %d is %d, want at least %d\n%s", re, i+1, n, min, report)
			}
		}
	}
	// 2 000 slices of 16–715 bytes: over 700 KB of objects in more than ten classes.
	atLeast(`heap spans (\d+), (\d+) bytes, objects (\d+) bytes, free room inside them \d+ bytes, (\d+) span classes`, 20, 700_000, 700_000, 10)
	atLeast(`(?m)size class +(\d+) (?:scan|noscan) +spans +(\d+)`, 1, 1)
	atLeast(`span sets in use (\d+), blocks on their spines (\d+) \((\d+) bytes each`, 10, 10, 4096)
	atLeast(`span sets with a spine (\d+) \((\d+) bytes each`, 10, 2048)
	// main, the three parked goroutines and the runtime's own.
	atLeast(`goroutines (\d+), stacks (\d+) bytes`, 4, 4*2048)
	atLeast(`stack +(\d+) in use +(\d+) main\.main\.func1`, 2048, 1)
	// Resident pages: the objects were written, so their pages are in; every
	// thread has a scheduler stack and a signal stack.
	atLeast(`heap object spans (\d+), (\d+) bytes, resident (\d+)`, 20, 700_000, 500_000)
	atLeast(`threads (\d+): scheduler stacks (\d+) bytes, resident (\d+); signal stacks (\d+) bytes`, 2, 2*8192, 4096, 2*32768)
	atLeast(`goroutine stacks (\d+), (\d+) bytes, resident (\d+)`, 4, 4*2048, 4096)
	// The twenty slices of pointers, by the type in their headers.
	atLeast(`(?m)size class +\d+ spans +\d+ objects +\d+: (?:\d+ [^,]+, )*(\d+) \*uint8(?:,|$)`, 20)
}
