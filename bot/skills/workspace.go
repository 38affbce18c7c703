package skills

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"

	toolfs "github.com/switchboard-chat/switchboard/tools/fs"
)

// Modes of what use_skill puts in a workspace: readable, never writable,
// so the fs tools' refusal is backed by the file system.
const (
	fileMode = 0o444
	dirMode  = 0o555
)

// install puts files into the workspace ws as skills/<name>/..., read-only,
// replacing what an earlier use_skill put there. Everything goes through
// an os.Root on the workspace, so a symlink planted in it cannot lead the
// writes out; a skills entry that is not a plain folder is refused.
func install(ws, name string, files []File) error {
	root, err := os.OpenRoot(ws)
	if err != nil {
		return fmt.Errorf("open the workspace: %w", unwrapPath(err))
	}
	defer root.Close()
	top := toolfs.SkillsDir
	info, err := root.Lstat(top)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := root.Mkdir(top, 0o755); err != nil {
			return fmt.Errorf("create %s/: %w", top, unwrapPath(err))
		}
	case err != nil:
		return fmt.Errorf("look at %s/: %w", top, unwrapPath(err))
	case !info.IsDir():
		return fmt.Errorf("%s in the workspace is not a folder; move it away (e.g. exec mv %s %s.old) so use_skill can put skills there", top, top, top)
	}
	if err := root.Chmod(top, 0o755); err != nil {
		return fmt.Errorf("open %s/ for the new files: %w", top, unwrapPath(err))
	}
	defer root.Chmod(top, dirMode)
	tmp := path.Join(top, ".new-"+name+"-"+randomSuffix())
	if err := writeTree(root, tmp, files); err != nil {
		_ = removeTree(root, tmp)
		return err
	}
	dest := path.Join(top, name)
	if err := removeTree(root, dest); err != nil {
		_ = removeTree(root, tmp)
		return fmt.Errorf("replace %s: %w", dest, err)
	}
	if err := root.Rename(tmp, dest); err != nil {
		_ = removeTree(root, tmp)
		return fmt.Errorf("put the files in %s: %w", dest, unwrapPath(err))
	}
	return nil
}

// writeTree writes files under dir, then makes them and every folder
// read-only.
func writeTree(root *os.Root, dir string, files []File) error {
	dirs := []string{dir}
	if err := root.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, unwrapPath(err))
	}
	for _, f := range files {
		p := path.Join(dir, f.Path)
		for d := path.Dir(p); d != dir && !slices.Contains(dirs, d); d = path.Dir(d) {
			dirs = append(dirs, d)
		}
		if err := root.MkdirAll(path.Dir(p), 0o755); err != nil {
			return fmt.Errorf("create the folder of %s: %w", f.Path, unwrapPath(err))
		}
		if err := root.WriteFile(p, f.Data, fileMode); err != nil {
			return fmt.Errorf("write %s: %w", f.Path, unwrapPath(err))
		}
		if err := root.Chmod(p, fileMode); err != nil { // the umask may have kept bits off; set exactly
			return fmt.Errorf("make %s read-only: %w", f.Path, unwrapPath(err))
		}
	}
	// Deepest first, so each folder is still writable while its children
	// are changed.
	slices.SortFunc(dirs, func(a, b string) int { return len(b) - len(a) })
	for _, d := range dirs {
		if err := root.Chmod(d, dirMode); err != nil {
			return fmt.Errorf("make %s read-only: %w", d, unwrapPath(err))
		}
	}
	return nil
}

// removeTree removes dir (made writable first, as install left it
// read-only); a missing dir is no error.
func removeTree(root *os.Root, dir string) error {
	if _, err := root.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	_ = fs.WalkDir(root.FS(), dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			_ = root.Chmod(p, 0o755)
		}
		return nil
	})
	return unwrapPath(root.RemoveAll(dir))
}

// randomSuffix names a temporary folder no concurrent use_skill shares.
func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
