// Package pidlock is an exclusive lock on a file that names the process
// holding it: the embedded stores use one per data directory so that two
// switchboard processes never run the same server.
package pidlock

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Lock is a held flock on a file. The kernel drops it when its process
// dies, so it is never stale, and locks taken through separate opens
// conflict even within one process.
type Lock struct{ f *os.File }

// TryLock takes the lock at path without waiting, writing this process's
// pid into the file. When someone else holds it, it returns a nil Lock and
// the pid the holder wrote (0 when not known).
func TryLock(path string) (*Lock, int, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("open lock file: %w; make sure data_dir exists and is writable", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		defer f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			b, _ := io.ReadAll(io.LimitReader(f, 32))
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			return nil, pid, nil
		}
		return nil, 0, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return &Lock{f: f}, 0, nil
}

// Release gives the lock up; a nil Lock is a no-op.
func (l *Lock) Release() {
	if l == nil {
		return
	}
	_ = l.f.Truncate(0)
	_ = l.f.Close()
}
