//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// unmapBinaryPages drops this process's mappings of the pages of its own
// binary that it only reads (code, read-only data, the runtime's tables)
// and returns how much of them was resident before. It runs once start-up
// is over and then while the daemon is idle (giveBackMemory).
//
// Why: start-up runs code from nearly every package once (package inits,
// configuration, migrations, connecting), and each page fault on the
// binary maps up to 64 KiB of its neighbours too (the kernel's
// fault-around). So an idle daemon kept about 20 MiB of its 24 MB binary
// mapped although its idle loops use a fraction of it. After
// MADV_DONTNEED the pages it uses again are mapped back on their next use
// from the page cache (a minor fault, no disk read while the file stays
// cached).
//
// What it does not do: free the page cache that holds the binary. The
// kernel still keeps those pages until it needs the memory, and a
// container's memory usage still counts them; what shrinks is what the
// process holds mapped (VmRSS and RssFile, which `ps`, `top` and the OOM
// killer see), and the unmapped pages are the first to go under memory
// pressure.
//
// Safety: only private mappings without write permission of the file
// /proc/self/exe names, so nothing written is lost: their content is the
// file's. A mapping holding private copies (a debugger's or uprobe's
// breakpoints) is left alone. The file is recognised by device and inode,
// or by path: some kernels show a file on overlayfs (a container's image)
// in the mappings with the underlying file's device and inode, not the
// ones stat gives.
func unmapBinaryPages() (int64, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/exe", &st); err != nil {
		return 0, fmt.Errorf("stat own binary: %w", err)
	}
	path, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return 0, fmt.Errorf("own binary's path: %w", err)
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return 0, fmt.Errorf("read own mappings: %w", err)
	}
	ranges, err := readOnlyMappings(f, binaryID{unix.Major(st.Dev), unix.Minor(st.Dev), st.Ino, path})
	f.Close()
	if err != nil {
		return 0, err
	}
	var resident int64
	for _, r := range ranges {
		if _, _, errno := unix.Syscall(unix.SYS_MADVISE, r.start, r.end-r.start, unix.MADV_DONTNEED); errno != 0 {
			return resident, fmt.Errorf("madvise %#x-%#x: %w", r.start, r.end, errno)
		}
		resident += r.rssKiB * 1024
	}
	return resident, nil
}

// mapping is one address range of /proc/self/smaps and how much of it was
// resident.
type mapping struct {
	start, end uintptr
	rssKiB     int64
}

// binaryID says which file is the binary: its device and inode, or its
// path.
type binaryID struct {
	major, minor uint32
	ino          uint64
	path         string
}

// readOnlyMappings reads smaps and returns the private mappings without
// write permission of the binary that hold no private (anonymous) pages.
func readOnlyMappings(smaps io.Reader, bin binaryID) ([]mapping, error) {
	var (
		out  []mapping
		cur  *mapping // the mapping whose fields follow, when it qualifies
		anon bool
	)
	done := func() {
		if cur != nil && !anon {
			out = append(out, *cur)
		}
		cur, anon = nil, false
	}
	dev, ino := fmt.Sprintf("%02x:%02x", bin.major, bin.minor), strconv.FormatUint(bin.ino, 10)
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			done()
			// start-end perms offset dev inode [path]
			if len(fields) < 5 {
				continue
			}
			sameFile := fields[3] == dev && fields[4] == ino
			if !sameFile && (len(fields) < 6 || bin.path == "" || strings.Join(fields[5:], " ") != bin.path) {
				continue
			}
			if perms := fields[1]; len(perms) != 4 || perms[0] != 'r' || perms[1] != '-' || perms[3] != 'p' {
				continue
			}
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 != nil || err2 != nil || end <= start {
				return nil, fmt.Errorf("own mappings: unreadable range %q", fields[0])
			}
			cur = &mapping{start: uintptr(start), end: uintptr(end)}
			continue
		}
		if cur == nil || len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "Rss:":
			cur.rssKiB, _ = strconv.ParseInt(fields[1], 10, 64)
		case "Anonymous:":
			anon = fields[1] != "0"
		}
	}
	done()
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read own mappings: %w", err)
	}
	return out, nil
}
