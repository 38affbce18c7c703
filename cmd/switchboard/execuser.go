package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/switchboard-chat/switchboard/tools/exec"
)

// defaultExecUser is the account exec commands run as when the daemon runs
// as root and exec.user is not set.
const defaultExecUser = "nobody"

// execPlacement is who exec commands run as and where their workspaces
// live.
type execPlacement struct {
	user       *exec.ExecUser // nil: the daemon's own user
	workspaces string
}

// describe says it in one line, for /status and the log.
func (p execPlacement) describe() string {
	if p.user == nil {
		return "exec: commands run as the daemon's user in " + p.workspaces
	}
	return fmt.Sprintf("exec: commands run as %s (uid %d), not root, in %s", p.user.Name, p.user.UID, p.workspaces)
}

// placeExec decides the exec placement. As root, commands run as the
// unprivileged account name (default nobody) and the workspaces go where
// that account can reach them: data_dir/workspaces, or, when a parent of
// data_dir is closed to it (a clone under /root), a folder under the
// system's temporary directory named after data_dir. Otherwise commands
// run as the daemon's user in data_dir/workspaces.
func placeExec(dataDir, name string, log *slog.Logger) (execPlacement, error) {
	workspaces, err := filepath.Abs(filepath.Join(dataDir, "workspaces"))
	if err != nil {
		return execPlacement{}, fmt.Errorf("data_dir: %w", err)
	}
	if os.Geteuid() != 0 {
		return execPlacement{workspaces: workspaces}, nil
	}
	if name == "" {
		name = defaultExecUser
	}
	u, err := exec.LookupExecUser(name)
	if err != nil {
		return execPlacement{}, err
	}
	if err := os.MkdirAll(filepath.Dir(workspaces), 0o755); err != nil {
		return execPlacement{}, fmt.Errorf("data_dir: %w", err)
	}
	if !u.CanReach(filepath.Dir(workspaces)) {
		sum := sha256.Sum256([]byte(workspaces))
		moved := filepath.Join(os.TempDir(), "switchboard-workspaces-"+hex.EncodeToString(sum[:6]))
		log.Warn("exec workspaces moved: the exec user cannot reach data_dir", "exec_user", u.Name,
			"data_dir", dataDir, "workspaces", moved)
		workspaces = moved
	}
	if err := os.MkdirAll(workspaces, 0o711); err != nil {
		return execPlacement{}, fmt.Errorf("exec workspaces %s: %w", workspaces, err)
	}
	return execPlacement{user: u, workspaces: workspaces}, nil
}
