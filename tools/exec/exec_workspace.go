package exec

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// maxWorkspaceNameLen bounds the readable part of a workspace directory name.
const maxWorkspaceNameLen = 64

// WorkspaceDir returns the workspace directory of a session under root: the
// session key with every character outside [A-Za-z0-9._-] replaced by "_",
// plus a short hash of the exact key so distinct keys never share a
// directory ("a:b" and "a/b" differ).
func WorkspaceDir(root, session string) string {
	var b strings.Builder
	for _, r := range session {
		if r == '.' || r == '_' || r == '-' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := strings.TrimLeft(b.String(), ".")
	if len(name) > maxWorkspaceNameLen {
		name = name[:maxWorkspaceNameLen]
	}
	if name == "" {
		name = "session"
	}
	sum := sha256.Sum256([]byte(session))
	return filepath.Join(root, name+"-"+hex.EncodeToString(sum[:4]))
}

// Workspaces hands each session a directory of its own under Root; exec
// runs commands there and the fs tools read and write there.
type Workspaces struct {
	// Root holds one directory per session (see WorkspaceDir).
	Root string
	// RunAs, when set, owns each workspace (exec's unprivileged account
	// when the daemon is root).
	RunAs *ExecUser
	// PerUser reports whether an agent (an open one) gives each person
	// one workspace for all their chats; otherwise each session (agent and
	// chat) has its own. Nil: per session.
	PerUser func(agent string) bool
}

// For returns the workspace of a call: its person's for an agent with
// per-user workspaces, else its session's.
func (w Workspaces) For(c tools.Call) (string, error) {
	if w.PerUser != nil && c.Agent != "" && c.UserID != "" && w.PerUser(c.Agent) {
		return w.Dir(c.Agent + "/user:" + c.UserID)
	}
	return w.Dir(c.Session)
}

// Dir creates (if needed) and returns the session's workspace, with
// symlinks resolved.
func (w Workspaces) Dir(session string) (string, error) {
	if w.Root == "" {
		return "", errors.New("no workspace root is configured; ask an admin to set data_dir")
	}
	if session == "" {
		return "", errors.New("this call has no session; workspace tools run only inside a conversation")
	}
	root, err := filepath.Abs(w.Root)
	if err != nil {
		return "", fmt.Errorf("resolve workspace root: %w", err)
	}
	dir := WorkspaceDir(root, session)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create workspace: %w", err)
	}
	if u := w.RunAs; u != nil {
		if !u.CanReach(filepath.Dir(root)) {
			return "", fmt.Errorf("the exec user %s cannot reach the workspace root %s (a parent directory is closed to it); ask an admin to move data_dir", u.Name, root)
		}
		// The root stays the daemon's; the user may only pass through it.
		if err := os.Chmod(root, 0o711); err != nil {
			return "", fmt.Errorf("open workspace root to %s: %w", u.Name, err)
		}
		if err := os.Chown(dir, int(u.UID), int(u.GID)); err != nil {
			return "", fmt.Errorf("give the workspace to %s: %w", u.Name, err)
		}
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("resolve workspace: %w", err)
	}
	return real, nil
}

// workspace returns the call's workspace for exec.
func (e *Exec) workspace(c tools.Call) (string, error) {
	if c.Session == "" {
		return "", errors.New("this call has no session; exec runs only inside a conversation")
	}
	return Workspaces{Root: e.opts.WorkspaceRoot, RunAs: e.opts.RunAs, PerUser: e.opts.PerUser}.For(c)
}

// resolveCwd confines the requested working directory to the workspace ws
// (already symlink-free): relative paths are taken from ws, absolute paths
// must lie inside it, and symlinks are resolved before the check. It
// returns the directory and its path relative to ws.
func resolveCwd(ws, cwd string) (dir, rel string, err error) {
	if cwd == "" || cwd == "." {
		return ws, ".", nil
	}
	if strings.IndexByte(cwd, 0) >= 0 {
		return "", "", errors.New(`"cwd" is not a valid path`)
	}
	target := cwd
	if !filepath.IsAbs(target) {
		target = filepath.Join(ws, target)
	}
	real, err := filepath.EvalSymlinks(target)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if inside(ws, filepath.Clean(target)) {
				return "", "", fmt.Errorf(`"cwd" %q does not exist in the workspace; create it first or omit cwd`, cwd)
			}
			return "", "", fmt.Errorf(`"cwd" %q is outside the workspace; use a path relative to the workspace`, cwd)
		}
		return "", "", fmt.Errorf(`"cwd" %q cannot be used: %w`, cwd, err)
	}
	if !inside(ws, real) {
		return "", "", fmt.Errorf(`"cwd" %q is outside the workspace; use a path relative to the workspace`, cwd)
	}
	info, err := os.Stat(real)
	if err != nil || !info.IsDir() {
		return "", "", fmt.Errorf(`"cwd" %q is not a directory`, cwd)
	}
	rel, err = filepath.Rel(ws, real)
	if err != nil {
		return "", "", fmt.Errorf(`"cwd" %q cannot be used: %w`, cwd, err)
	}
	return real, rel, nil
}

// inside reports whether path p is dir or below it (both cleaned).
func inside(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
