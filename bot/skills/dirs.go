package skills

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// RescanEvery is how often the skill folders are looked at for changes.
const RescanEvery = 3 * time.Second

// maxScanEntries bounds the entries one look at the folders stats, so a
// huge folder cannot make every look slow.
const maxScanEntries = 20000

// DirSkill is a skill found in a skills.dirs folder, without its files
// (use_skill reads them again from the folder).
type DirSkill struct {
	Name, Description, Body string
	// Folder is the skill's folder, as found under its skills.dirs entry.
	Folder string
}

// Dirs is the directory source: every sub-folder with a SKILL.md of the
// configured folders, read at start and again when something in them
// changes (a cheap look at names, sizes and times every RescanEvery).
// Invalid folders are skipped with one warning each time they change.
type Dirs struct {
	dirs []string
	log  *slog.Logger

	mu     sync.RWMutex
	skills map[string]DirSkill
	print  uint64 // fingerprint of the folders when last read
}

// NewDirs reads the skills of dirs (skills.dirs; relative paths are taken
// from the working directory) and returns the source.
func NewDirs(dirs []string, log *slog.Logger) *Dirs {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Dirs{dirs: dirs, log: log, skills: map[string]DirSkill{}}
	d.Rescan()
	return d
}

// Run looks for changes every `every` until ctx ends.
func (d *Dirs) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.Rescan()
		}
	}
}

// Rescan reads the folders again when they changed since the last read
// and reports whether it did.
func (d *Dirs) Rescan() bool {
	print := d.fingerprint()
	d.mu.RLock()
	same := print == d.print && d.print != 0
	d.mu.RUnlock()
	if same {
		return false
	}
	found := d.read()
	d.mu.Lock()
	d.skills, d.print = found, print
	d.mu.Unlock()
	d.log.Info("skills read from skills.dirs", "skills", len(found), "dirs", d.dirs)
	return true
}

// read reads every skill folder of every dir; a name in two folders is
// the first one's.
func (d *Dirs) read() map[string]DirSkill {
	found := map[string]DirSkill{}
	for _, dir := range d.dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			d.log.Warn("skills folder unreadable; its skills are left out", "dir", dir, "err", err)
			continue
		}
		for _, e := range entries {
			if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
				continue
			}
			folder := filepath.Join(dir, e.Name())
			if _, err := os.Lstat(filepath.Join(folder, Manifest)); err != nil {
				continue // not a skill
			}
			s, err := ReadFolder(folder)
			if err != nil {
				d.log.Warn("skill folder skipped: "+err.Error(), "folder", folder)
				continue
			}
			if prev, dup := found[s.Name]; dup {
				d.log.Warn(fmt.Sprintf("skill folder skipped: skill %s is already in %s", s.Name, prev.Folder), "folder", folder)
				continue
			}
			found[s.Name] = DirSkill{Name: s.Name, Description: s.Description, Body: s.Body, Folder: folder}
		}
	}
	return found
}

// fingerprint hashes the names, sizes, modes and times of everything in
// the folders (at most maxScanEntries entries), never 0.
func (d *Dirs) fingerprint() uint64 {
	h := fnv.New64a()
	n := 0
	for _, dir := range d.dirs {
		fmt.Fprintf(h, "dir %s\n", dir)
		_ = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
			if n++; n > maxScanEntries {
				return filepath.SkipAll
			}
			if err != nil {
				fmt.Fprintf(h, "%s error\n", p)
				return nil
			}
			info, err := e.Info()
			if err != nil {
				return nil
			}
			fmt.Fprintf(h, "%s %d %d %d\n", p, info.Size(), info.Mode(), info.ModTime().UnixNano())
			return nil
		})
	}
	return h.Sum64() | 1
}

// All returns the directory skills, sorted by name.
func (d *Dirs) All() []DirSkill {
	d.mu.RLock()
	defer d.mu.RUnlock()
	out := make([]DirSkill, 0, len(d.skills))
	for _, s := range d.skills {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Get returns the directory skill called name.
func (d *Dirs) Get(name string) (DirSkill, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	s, ok := d.skills[name]
	return s, ok
}
