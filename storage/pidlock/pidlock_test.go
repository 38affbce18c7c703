package pidlock

import (
	"os"
	"path/filepath"
	"testing"
)

func TestTryLockExcludesOthersUntilReleased(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.lock")
	first, holder, err := TryLock(path)
	if err != nil || first == nil || holder != 0 {
		t.Fatalf("first TryLock = %v, %d, %v; want a lock", first, holder, err)
	}
	second, holder, err := TryLock(path)
	if err != nil || second != nil {
		t.Fatalf("second TryLock while held = %v, %v; want no lock, no error", second, err)
	}
	if holder != os.Getpid() {
		t.Errorf("holder = %d, want this process %d", holder, os.Getpid())
	}
	first.Release()
	third, _, err := TryLock(path)
	if err != nil || third == nil {
		t.Fatalf("TryLock after Release = %v, %v; want a lock", third, err)
	}
	third.Release()
	var none *Lock
	none.Release() // a nil Lock is a no-op
}

func TestTryLockUnwritableDir(t *testing.T) {
	_, _, err := TryLock(filepath.Join(t.TempDir(), "missing", "x.lock"))
	if err == nil {
		t.Fatal("TryLock in a missing directory succeeded")
	}
}
