package redis

import (
	"fmt"
	"path/filepath"
	"strconv"

	"github.com/switchboard-chat/switchboard/storage/pidlock"
)

// lockFileName is the file under the data directory whose lock the process
// serving that directory's in-process Redis holds.
const lockFileName = "redis.lock"

// EmbeddedInUseError is returned by StartEmbeddedFor when another process
// already serves the data directory's in-process Redis.
type EmbeddedInUseError struct {
	// DataDir is the data directory in question.
	DataDir string
	// PID is the process holding it, 0 when not known.
	PID int
}

func (e *EmbeddedInUseError) Error() string {
	holder := "pid unknown"
	if e.PID > 0 {
		holder = "pid " + strconv.Itoa(e.PID)
	}
	return fmt.Sprintf("the in-process Redis of data_dir %s is already served by another switchboard process (%s); "+
		"stop it or configure redis.url (SWITCHBOARD_REDIS_URL)", e.DataDir, holder)
}

// lockDataDir takes the lock of dataDir without waiting; when another
// process holds it the error names that process and what to do.
func lockDataDir(dataDir string) (*pidlock.Lock, error) {
	lock, holder, err := pidlock.TryLock(filepath.Join(dataDir, lockFileName))
	if err != nil {
		return nil, fmt.Errorf("in-process redis: %w, or configure redis.url", err)
	}
	if lock == nil {
		return nil, &EmbeddedInUseError{DataDir: dataDir, PID: holder}
	}
	return lock, nil
}
