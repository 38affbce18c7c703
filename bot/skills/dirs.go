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
	"slices"
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

	mu       sync.RWMutex
	skills   map[string]DirSkill
	problems []string // why folders were skipped, at the last read
	print    uint64   // fingerprint of the folders when last read
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
	found, problems := d.read()
	d.mu.Lock()
	d.skills, d.problems, d.print = found, problems, print
	d.mu.Unlock()
	d.log.Info("skills read from skills.dirs", "skills", len(found), "dirs", d.dirs)
	return true
}

// read reads every skill folder of every dir; a name in two folders is
// the first one's. problems say which folders were skipped and why (each
// also logged once).
func (d *Dirs) read() (found map[string]DirSkill, problems []string) {
	found = map[string]DirSkill{}
	skip := func(folder, why string) {
		d.log.Warn("skill folder skipped: "+why, "folder", folder)
		problems = append(problems, folder+": "+why)
	}
	for _, dir := range d.dirs {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			skip(dir, "the folder is unreadable ("+unwrapPath(err).Error()+"); its skills are left out")
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
				skip(folder, err.Error())
				continue
			}
			if prev, dup := found[s.Name]; dup {
				skip(folder, fmt.Sprintf("skill %s is already in %s", s.Name, prev.Folder))
				continue
			}
			found[s.Name] = DirSkill{Name: s.Name, Description: s.Description, Body: s.Body, Folder: folder}
		}
	}
	return found, problems
}

// Problems says which folders the last read skipped and why, for
// switchboard doctor.
func (d *Dirs) Problems() []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return slices.Clone(d.problems)
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
