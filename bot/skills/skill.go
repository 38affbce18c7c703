package skills

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/switchboard-chat/switchboard/config"
)

// Limits of one skill folder, for directory and published skills alike.
const (
	MaxFiles       = 50        // files in a skill, SKILL.md included
	MaxTotalBytes  = 1 << 20   // all its files together
	MaxFileBytes   = 256 << 10 // one file
	MaxDescription = 1024      // characters of the description
	// Manifest is the file that makes a folder a skill.
	Manifest = "SKILL.md"
	// maxPathLen bounds one file's path inside a skill.
	maxPathLen = 200
)

// File is one file of a skill; Path is relative to the skill's folder,
// slash-separated and clean.
type File struct {
	Path string
	Data []byte
}

// Skill is a skill's manifest and files.
type Skill struct {
	Name        string
	Description string
	// Body is SKILL.md after its front matter: what use_skill shows.
	Body string
	// Files are every file of the skill, SKILL.md included, sorted by path.
	Files []File
}

// Size is the bytes of all s's files.
func (s Skill) Size() int {
	n := 0
	for _, f := range s.Files {
		n += len(f.Data)
	}
	return n
}

// frontMatter is the part of a SKILL.md front matter switchboard reads;
// other keys (license, metadata, …) are allowed and ignored.
type frontMatter struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// ParseManifest reads a SKILL.md: YAML front matter between "---" lines
// with a valid name and a description, then the body. The error says what
// to fix.
func ParseManifest(data []byte) (name, description, body string, err error) {
	if !utf8.Valid(data) {
		return "", "", "", errors.New("SKILL.md is not UTF-8 text")
	}
	text := strings.TrimPrefix(strings.ReplaceAll(string(data), "\r\n", "\n"), "\ufeff")
	rest, ok := strings.CutPrefix(text, "---\n")
	if !ok {
		return "", "", "", errors.New("SKILL.md must start with YAML front matter: a line ---, name: and description:, then a line ---")
	}
	head, body, ok := strings.Cut(rest, "\n---\n")
	if !ok {
		head, ok = strings.CutSuffix(rest, "\n---")
		if !ok {
			return "", "", "", errors.New("SKILL.md's front matter has no closing --- line")
		}
	}
	var fm frontMatter
	if err := yaml.Unmarshal([]byte(head), &fm); err != nil {
		return "", "", "", fmt.Errorf("SKILL.md's front matter is not valid YAML (%s); write name: and description: as plain strings", firstLine(err.Error()))
	}
	if err := checkName(fm.Name); err != nil {
		return "", "", "", err
	}
	desc := strings.Join(strings.Fields(fm.Description), " ")
	switch {
	case desc == "":
		return "", "", "", errors.New("SKILL.md's front matter has no description: say in a sentence what the skill does and when to use it")
	case utf8.RuneCountInString(desc) > MaxDescription:
		return "", "", "", fmt.Errorf("the description has %d characters; at most %d are allowed", utf8.RuneCountInString(desc), MaxDescription)
	case strings.IndexFunc(desc, hidden) >= 0:
		return "", "", "", errors.New("the description contains control or invisible formatting characters; use plain text")
	}
	return fm.Name, desc, strings.TrimSpace(body), nil
}

// checkName refuses a name that is not a skill name.
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("SKILL.md's front matter has no name: add name: with lower-case letters, digits and hyphens (e.g. release-notes)")
	case !config.IsSkillName(name):
		return fmt.Errorf("%q is not a skill name: use lower-case letters, digits and single hyphens, at most 64 (e.g. release-notes)", clip(name, 80))
	}
	return nil
}

// ReadFolder reads the skill in folder dir: every file below it (dot
// files and folders such as .git left out) within the limits, and its
// SKILL.md checked. Symbolic links and special files are refused, and
// nothing outside dir is read (the folder is opened as an os.Root). The
// error says what to fix.
func ReadFolder(dir string) (Skill, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return Skill{}, fmt.Errorf("cannot open the folder: %w", unwrapPath(err))
	}
	defer root.Close()
	return ReadRoot(root)
}

// ReadRoot is ReadFolder on a folder already opened as root.
func ReadRoot(root *os.Root) (Skill, error) {
	var files []File
	total := 0
	err := fs.WalkDir(root.FS(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("%s: %w", p, unwrapPath(err))
		}
		if p == "." {
			return nil
		}
		if strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if err := checkPath(p); err != nil {
			return err
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s is a symbolic link; a skill holds only plain files (copy the file in instead)", p)
		case d.IsDir():
			return nil
		case !d.Type().IsRegular():
			return fmt.Errorf("%s is not a plain file; remove it", p)
		}
		if len(files) == MaxFiles {
			return fmt.Errorf("the skill has more than %d files; remove some", MaxFiles)
		}
		data, err := readBounded(root, p)
		if err != nil {
			return err
		}
		total += len(data)
		if total > MaxTotalBytes {
			return fmt.Errorf("the skill's files are more than %d bytes together; remove or shrink some", MaxTotalBytes)
		}
		files = append(files, File{Path: p, Data: data})
		return nil
	})
	if err != nil {
		return Skill{}, err
	}
	return FromFiles(files)
}

// FromFiles checks a skill's files (their paths and limits, its SKILL.md)
// and returns the skill, files sorted by path.
func FromFiles(files []File) (Skill, error) {
	if len(files) > MaxFiles {
		return Skill{}, fmt.Errorf("the skill has %d files; at most %d are allowed", len(files), MaxFiles)
	}
	sorted := append([]File(nil), files...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Path < sorted[j].Path })
	total := 0
	var manifest []byte
	for i, f := range sorted {
		if err := checkPath(f.Path); err != nil {
			return Skill{}, err
		}
		if i > 0 && sorted[i-1].Path == f.Path {
			return Skill{}, fmt.Errorf("%s appears twice", f.Path)
		}
		if len(f.Data) > MaxFileBytes {
			return Skill{}, fmt.Errorf("%s is %d bytes; one file may have at most %d", f.Path, len(f.Data), MaxFileBytes)
		}
		total += len(f.Data)
		if f.Path == Manifest {
			manifest = f.Data
		}
	}
	if total > MaxTotalBytes {
		return Skill{}, fmt.Errorf("the skill's files are %d bytes together; at most %d are allowed", total, MaxTotalBytes)
	}
	if manifest == nil {
		return Skill{}, errors.New("there is no SKILL.md in the folder; write one with front matter (name, description) and the instructions")
	}
	name, desc, body, err := ParseManifest(manifest)
	if err != nil {
		return Skill{}, err
	}
	return Skill{Name: name, Description: desc, Body: body, Files: sorted}, nil
}

// checkPath refuses a file path that is not clean, relative and inside
// the skill, or that has control characters.
func checkPath(p string) error {
	switch {
	case p == "" || len(p) > maxPathLen:
		return fmt.Errorf("file path %q is empty or longer than %d characters", clip(p, 80), maxPathLen)
	case !utf8.ValidString(p) || strings.IndexFunc(p, hidden) >= 0:
		return fmt.Errorf("file path %q has control or invisible formatting characters or is not UTF-8; rename the file", clip(p, 80))
	case path.IsAbs(p) || path.Clean(p) != p || p == ".." || strings.HasPrefix(p, "../") || strings.Contains(p, "\\"):
		return fmt.Errorf("file path %q leads outside the skill's folder", clip(p, 80))
	}
	return nil
}

// hidden reports whether r is a control or format character (such as a
// right-to-left override), which could make a name or description read
// differently to the approvers than it is.
func hidden(r rune) bool { return unicode.In(r, unicode.Cc, unicode.Cf) }

// readBounded reads file p of root, refusing one over MaxFileBytes.
func readBounded(root *os.Root, p string) ([]byte, error) {
	f, err := root.Open(p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, unwrapPath(err))
	}
	defer f.Close()
	var b bytes.Buffer
	if _, err := io.Copy(&b, io.LimitReader(f, MaxFileBytes+1)); err != nil {
		return nil, fmt.Errorf("read %s: %w", p, unwrapPath(err))
	}
	if b.Len() > MaxFileBytes {
		return nil, fmt.Errorf("%s is larger than %d bytes; one file may have at most that", p, MaxFileBytes)
	}
	return b.Bytes(), nil
}

// unwrapPath drops the *fs.PathError around err: its absolute path is
// the daemon's, not something the model or the log line needs twice.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// clip shortens s to at most n bytes, on a rune boundary, marking the cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// firstLine is the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
