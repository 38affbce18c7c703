package embedded

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// serverUser is the account the embedded server runs as when switchboard runs
// as root (PostgreSQL refuses to run as root).
type serverUser struct {
	name   string
	uid    uint32
	gid    uint32
	groups []uint32
}

// pickServerUser returns nil when the process is not root: the server then
// runs as the current user. As root it returns the owner of an existing data
// directory, else user "postgres", else "nobody".
func pickServerUser(pgData string) (*serverUser, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	if fi, err := os.Stat(pgData); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Uid != 0 {
			if u, err := user.LookupId(strconv.FormatUint(uint64(st.Uid), 10)); err == nil {
				return serverUserOf(u)
			}
			return &serverUser{name: "uid " + strconv.FormatUint(uint64(st.Uid), 10), uid: st.Uid, gid: st.Gid}, nil
		}
	}
	for _, name := range []string{"postgres", "nobody"} {
		if u, err := user.Lookup(name); err == nil {
			return serverUserOf(u)
		}
	}
	return nil, errors.New("embedded PostgreSQL cannot run as root and neither user postgres nor nobody exists; " +
		"create a user named postgres, run switchboard as a non-root user, or set database.url")
}

func serverUserOf(u *user.User) (*serverUser, error) {
	uid, err := strconv.ParseUint(u.Uid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: uid %q: %w", u.Username, u.Uid, err)
	}
	gid, err := strconv.ParseUint(u.Gid, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("user %s: gid %q: %w", u.Username, u.Gid, err)
	}
	su := &serverUser{name: u.Username, uid: uint32(uid), gid: uint32(gid)}
	if ids, err := u.GroupIds(); err == nil {
		for _, id := range ids {
			if g, err := strconv.ParseUint(id, 10, 32); err == nil {
				su.groups = append(su.groups, uint32(g))
			}
		}
	}
	return su, nil
}

// canSearch reports whether u may traverse the directory described by fi.
func (u *serverUser) canSearch(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true
	}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid == u.uid:
		return perm&0o100 != 0
	case st.Gid == u.gid || slices.Contains(u.groups, st.Gid):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

// blockedOn returns the first directory on the way from / to dir (dir
// included) that u may not search, or "" when u reaches dir.
func (u *serverUser) blockedOn(dir string) string {
	var chain []string
	for d := dir; ; d = filepath.Dir(d) {
		chain = append(chain, d)
		if d == filepath.Dir(d) {
			break
		}
	}
	for i := len(chain) - 1; i >= 0; i-- {
		fi, err := os.Stat(chain[i])
		if err != nil || !u.canSearch(fi) {
			return chain[i]
		}
	}
	return ""
}

// chown gives path to u; a no-op when the server runs as the current user.
func (u *serverUser) chown(path string) error {
	if u == nil {
		return nil
	}
	if err := os.Lchown(path, int(u.uid), int(u.gid)); err != nil {
		return fmt.Errorf("embedded postgres: give %s to user %s: %w", path, u.name, err)
	}
	return nil
}

// command prepares one PostgreSQL program run as u, in its own process group
// (so a Ctrl-C to switchboard does not reach the server mid-shutdown), with a
// predictable environment.
func (u *serverUser) command(ctx context.Context, dir, prog string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, prog, args...)
	cmd.Dir = dir
	cmd.Env = serverEnv(os.Environ())
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if u != nil {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: u.uid, Gid: u.gid, Groups: u.groups}
	}
	return cmd
}

// serverEnv drops libpq settings that could point the programs elsewhere and
// pins the locale so messages are predictable.
func serverEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if strings.HasPrefix(kv, "PG") || strings.HasPrefix(kv, "LC_") || strings.HasPrefix(kv, "LANG=") {
			continue
		}
		out = append(out, kv)
	}
	return append(out, "LC_ALL=C")
}
