package embedded

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// fallbackRoots are tried in order for a cluster whose data directory the
// server's user cannot reach: a directory only root writes, then one under
// the temporary directory ("" stands for os.TempDir()/switchboard).
var fallbackRoots = []string{"/var/lib/switchboard", ""}

// homeMarker names, inside a fallback home, the file saying which data
// directory the home belongs to.
const homeMarker = "data_dir"

// clusterHome returns the directory that holds the cluster (postgres/), its
// socket directory and its log. That is dataDir itself when the server runs
// as the current user or its user can reach dataDir. Otherwise (root, with
// dataDir under a private directory such as /root or a mktemp -d) it is a
// root-owned directory per data directory that user can reach, such as
// /var/lib/switchboard/postgres-<hash of dataDir>; blocked then names the
// directory that kept the server's user out. A cluster already kept in such
// a directory stays in use even if dataDir became reachable later. Nothing
// is chmod-ed.
func clusterHome(dataDir string, u *serverUser) (home, blocked string, err error) {
	if u == nil {
		return dataDir, "", nil
	}
	blocked = u.blockedOn(dataDir)
	inPlace := filepath.Join(dataDir, "postgres")
	if _, err := os.Stat(filepath.Join(inPlace, "PG_VERSION")); err == nil {
		if blocked == "" {
			return dataDir, "", nil
		}
		return "", blocked, fmt.Errorf("embedded PostgreSQL runs as user %s (it refuses to run as root) but cannot reach its cluster %s because %s is not searchable by that user; "+
			"run `chmod o+x %s`, move data_dir somewhere that user can reach, or set database.url", u.name, inPlace, blocked, blocked)
	}
	canonical := dataDir
	if real, err := filepath.EvalSymlinks(dataDir); err == nil {
		canonical = real
	}
	homes := fallbackHomes(canonical)
	for _, home := range homes {
		if _, err := os.Stat(filepath.Join(home, "postgres", "PG_VERSION")); err == nil && homeBelongsTo(home, canonical) {
			return home, blocked, nil
		}
	}
	if blocked == "" {
		return dataDir, "", nil
	}
	var errs []error
	for _, home := range homes {
		if err := makeHome(home, canonical, u); err != nil {
			errs = append(errs, err)
			continue
		}
		return home, blocked, nil
	}
	return "", blocked, fmt.Errorf("embedded PostgreSQL runs as user %s (it refuses to run as root), %s is not searchable by that user, and no other place for the cluster worked: %w; "+
		"choose a data_dir that user can reach, or set database.url", u.name, blocked, errors.Join(errs...))
}

// fallbackHomes lists, in order of preference, the directories the cluster
// of dataDir may live in when its user cannot reach dataDir.
func fallbackHomes(dataDir string) []string {
	sum := sha256.Sum256([]byte(dataDir))
	name := "postgres-" + hex.EncodeToString(sum[:6])
	homes := make([]string, 0, len(fallbackRoots))
	for _, root := range fallbackRoots {
		if root == "" {
			root = filepath.Join(os.TempDir(), "switchboard")
		}
		homes = append(homes, filepath.Join(root, name))
	}
	return homes
}

// homeBelongsTo reports whether home is a private directory whose marker
// names dataDir.
func homeBelongsTo(home, dataDir string) bool {
	b, err := os.ReadFile(filepath.Join(home, homeMarker))
	return err == nil && strings.TrimSpace(string(b)) == dataDir &&
		checkPrivateDir(filepath.Dir(home)) == nil && checkPrivateDir(home) == nil
}

// makeHome creates (or checks) home, the fallback home of dataDir: it and
// its parent must be directories of this process's user that no one else
// may write, it must be reachable by u, and it must not belong to another
// data directory.
func makeHome(home, dataDir string, u *serverUser) error {
	root := filepath.Dir(home)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	if err := checkPrivateDir(root); err != nil {
		return err
	}
	if err := os.Mkdir(home, 0o711); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := checkPrivateDir(home); err != nil {
		return err
	}
	if blocked := u.blockedOn(home); blocked != "" {
		return fmt.Errorf("%s is not searchable by user %s", blocked, u.name)
	}
	marker := filepath.Join(home, homeMarker)
	if b, err := os.ReadFile(marker); err == nil {
		if owner := strings.TrimSpace(string(b)); owner != dataDir {
			return fmt.Errorf("%s already holds the cluster of data_dir %s", home, owner)
		}
		return nil
	}
	return os.WriteFile(marker, []byte(dataDir+"\n"), 0o644)
}

// checkPrivateDir makes sure path is a real directory (not a symlink) of
// this process's user that neither its group nor others may write, so no
// other user can plant files in it.
func checkPrivateDir(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("%s is not a directory", path)
	case ok && int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to uid %d, not to this process's user", path, st.Uid)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("%s may be written by other users (mode %o)", path, fi.Mode().Perm())
	}
	return nil
}
