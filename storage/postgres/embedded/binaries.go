package embedded

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// defaultLibGlob is where Debian and Ubuntu install each PostgreSQL version's
// server binaries.
const defaultLibGlob = "/usr/lib/postgresql/*/bin"

// ErrNoServerBinaries is returned by Start when no PostgreSQL server
// installation (initdb and pg_ctl) can be found.
var ErrNoServerBinaries = errors.New("embedded PostgreSQL needs the server binaries (initdb, pg_ctl) but none were found; " +
	"install them (Debian/Ubuntu: apt-get install postgresql) or set database.url (SWITCHBOARD_DATABASE_URL) to an existing server")

// serverBinaries are the programs the embedded server runs.
type serverBinaries struct {
	initdb string
	pgCtl  string
	// postgres is the server itself, next to them; run directly only in
	// single-user mode, to set a password.
	postgres string
}

// findServerBinaries looks for a directory holding both initdb and pg_ctl:
// only binDir when it is set, else each directory of pathEnv in order, then
// the directories matching libGlob, newest version first.
func findServerBinaries(binDir, pathEnv, libGlob string) (serverBinaries, error) {
	if binDir != "" {
		if b, ok := binariesIn(binDir); ok {
			return b, nil
		}
		return serverBinaries{}, fmt.Errorf("%w (looked in %s)", ErrNoServerBinaries, binDir)
	}
	for _, dir := range filepath.SplitList(pathEnv) {
		if dir == "" {
			continue
		}
		if b, ok := binariesIn(dir); ok {
			return b, nil
		}
	}
	dirs, _ := filepath.Glob(libGlob) // the pattern is constant; a bad one matches nothing
	slices.SortFunc(dirs, func(a, b string) int {
		return compareVersions(versionOf(b), versionOf(a)) // newest first
	})
	for _, dir := range dirs {
		if b, ok := binariesIn(dir); ok {
			return b, nil
		}
	}
	return serverBinaries{}, ErrNoServerBinaries
}

// binariesIn reports whether dir holds executable initdb and pg_ctl.
func binariesIn(dir string) (serverBinaries, bool) {
	b := serverBinaries{initdb: filepath.Join(dir, "initdb"), pgCtl: filepath.Join(dir, "pg_ctl"), postgres: filepath.Join(dir, "postgres")}
	return b, isExecutable(b.initdb) && isExecutable(b.pgCtl)
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// versionOf extracts the version from a path like /usr/lib/postgresql/16/bin.
func versionOf(binDir string) []int {
	var v []int
	for _, part := range strings.Split(filepath.Base(filepath.Dir(binDir)), ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil
		}
		v = append(v, n)
	}
	return v
}

// compareVersions orders versions numerically; an unparsable (nil) version
// sorts before every real one.
func compareVersions(a, b []int) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := cmp.Compare(a[i], b[i]); c != 0 {
			return c
		}
	}
	return cmp.Compare(len(a), len(b))
}

// FindBinaries returns the directory holding the PostgreSQL server binaries
// the embedded default would use, or ErrNoServerBinaries (for doctor).
func FindBinaries() (string, error) {
	b, err := findServerBinaries("", os.Getenv("PATH"), defaultLibGlob)
	if err != nil {
		return "", err
	}
	return filepath.Dir(b.initdb), nil
}
