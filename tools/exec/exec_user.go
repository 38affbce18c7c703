package exec

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
)

// ExecUser is the unprivileged account exec commands run as when the
// daemon runs as root.
type ExecUser struct {
	Name     string
	UID, GID uint32
}

// LookupExecUser resolves name, a user name or a numeric uid, to an
// ExecUser. Root is refused: running commands as root is what RunAs is
// there to prevent.
func LookupExecUser(name string) (*ExecUser, error) {
	u, err := user.Lookup(name)
	if err != nil {
		if _, numErr := strconv.ParseUint(name, 10, 32); numErr == nil {
			u, err = user.LookupId(name)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("exec user %q: %w (create the account or set exec.user to an existing one)", name, err)
	}
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("exec user %q: uid %q: %w", name, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("exec user %q: gid %q: %w", name, u.Gid, err)
	}
	if uid == 0 {
		return nil, fmt.Errorf("exec user %q is root; choose an unprivileged account", name)
	}
	return &ExecUser{Name: u.Username, UID: uint32(uid), GID: uint32(gid)}, nil
}

// credential is the process credential of commands run as u: its uid and
// primary gid, with no supplementary groups (root's are not inherited).
func (u *ExecUser) credential() *syscall.Credential {
	return &syscall.Credential{Uid: u.UID, Gid: u.GID, Groups: []uint32{}}
}

// CanReach reports whether u can reach dir: every directory from / to dir
// lets u search it (execute permission for u as owner, group member by
// primary gid, or other).
func (u *ExecUser) CanReach(dir string) bool {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for p := abs; ; p = filepath.Dir(p) {
		info, err := os.Stat(p)
		if err != nil {
			return false
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return false
		}
		mode := info.Mode().Perm()
		var can bool
		switch {
		case st.Uid == u.UID:
			can = mode&0o100 != 0
		case st.Gid == u.GID:
			can = mode&0o010 != 0
		default:
			can = mode&0o001 != 0
		}
		if !can {
			return false
		}
		if p == filepath.Dir(p) {
			return true
		}
	}
}
