//go:build linux

package main

import (
	"os"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// A cut-down /proc/self/smaps: the binary (device fd:01, inode 42) mapped
// as code, read-only data, read-only data with a breakpoint's private copy,
// and writable data; another file with the same inode on another device; a
// shared read-only mapping; the heap; and the binary's path under another
// device and inode, as overlayfs shows a container's binary.
const sampleSmaps = `00400000-00c1e000 r-xp 00000000 fd:01 42                                 /usr/local/bin/switchboard
Size:               8312 kB
Rss:                7000 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00c1e000-01600000 r--p 0081e000 fd:01 42                                 /usr/local/bin/switchboard
Size:              10120 kB
Rss:                9000 kB
Private-Dirty:         0 kB
Anonymous:             0 kB
00d00000-00d10000 r--p 00900000 fd:01 42                                 /usr/local/bin/switchboard
Rss:                  64 kB
Anonymous:             4 kB
01600000-01700000 rw-p 01200000 fd:01 42                                 /usr/local/bin/switchboard
Rss:                 500 kB
Anonymous:           100 kB
7f0000000000-7f0000100000 r-xp 00000000 fd:02 42                         /lib/other.so
Rss:                 100 kB
Anonymous:             0 kB
7f0000200000-7f0000300000 r--s 00000000 fd:01 42                         /usr/local/bin/switchboard
Rss:                 100 kB
Anonymous:             0 kB
c000000000-c000400000 rw-p 00000000 00:00 0 
Rss:                2048 kB
Anonymous:          2048 kB
7f0000400000-7f0000500000 r--p 00000000 00:2e 77                         /usr/local/bin/switchboard
Rss:                 300 kB
Anonymous:             0 kB
`

// Only the binary's private read-only mappings without private copies
// may be let go: anything written would be lost.
func TestReadOnlyMappingsPicksOnlyTheBinarysUnwrittenPages(t *testing.T) {
	bin := binaryID{major: 0xfd, minor: 0x01, ino: 42, path: "/usr/local/bin/switchboard"}
	got, err := readOnlyMappings(strings.NewReader(sampleSmaps), bin)
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{
		{start: 0x400000, end: 0xc1e000, rssKiB: 7000},
		{start: 0xc1e000, end: 0x1600000, rssKiB: 9000},
		{start: 0x7f0000400000, end: 0x7f0000500000, rssKiB: 300},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d mappings %+v, want %+v", len(got), got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("mapping %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, err := readOnlyMappings(strings.NewReader("zz-00c1e000 r-xp 00000000 fd:01 42 /x\n"), bin); err == nil {
		t.Error("an unreadable range of the binary was accepted")
	}
}

// exeRssKiB is how much of this test binary is resident.
func exeRssKiB(t *testing.T) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// By device and inode only: the path must not be what finds them here.
	ms, err := readOnlyMappings(f, binaryID{major: unix.Major(st.Dev), minor: unix.Minor(st.Dev), ino: st.Ino})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 {
		t.Fatal("no read-only mapping of the test binary found in /proc/self/smaps")
	}
	var kib int64
	for _, m := range ms {
		kib += m.rssKiB
	}
	return kib
}

// On the real process: the binary's pages are let go, and the code that
// runs afterwards (this test, the runtime) comes back on use.
func TestUnmapBinaryPagesUnmapsTheBinary(t *testing.T) {
	before := exeRssKiB(t)
	released, err := unmapBinaryPages()
	if err != nil {
		t.Fatal(err)
	}
	after := exeRssKiB(t)
	t.Logf("binary resident: %d KiB before, %d KiB after (released %d KiB)", before, after, released/1024)
	if released <= 0 {
		t.Fatalf("released %d bytes, want the resident pages of the binary", released)
	}
	if after >= before {
		t.Fatalf("binary resident %d KiB after, %d KiB before: nothing was unmapped", after, before)
	}
	// Code not run since comes back: a fresh parse still works.
	if _, err := readOnlyMappings(strings.NewReader(sampleSmaps), binaryID{major: 0xfd, minor: 1, ino: 42}); err != nil {
		t.Fatal(err)
	}
}
