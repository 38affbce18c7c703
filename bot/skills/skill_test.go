package skills

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSkill writes files (path → content) under a new folder.
func writeSkill(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for p, content := range files {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const goodManifest = "---\nname: release-notes\ndescription: Writes release notes\nlicense: MIT\n---\n# Release notes\nCollect the changes.\n"

// TestReadFolderReadsAValidSkill: front matter, body and files, dot
// folders left out.
func TestReadFolderReadsAValidSkill(t *testing.T) {
	dir := writeSkill(t, map[string]string{"SKILL.md": goodManifest, "scripts/collect.sh": "git log\n", ".git/HEAD": "ref"})
	s, err := ReadFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	if s.Name != "release-notes" || s.Description != "Writes release notes" || !strings.HasPrefix(s.Body, "# Release notes") {
		t.Fatalf("skill = %+v", s)
	}
	if len(s.Files) != 2 || s.Files[0].Path != "SKILL.md" || s.Files[1].Path != "scripts/collect.sh" {
		t.Fatalf("files = %+v; want SKILL.md and the script, .git left out", s.Files)
	}
}

// TestParseManifestRefusesBadFrontMatter: each broken or hostile front
// matter is refused with a message saying what to fix.
func TestParseManifestRefusesBadFrontMatter(t *testing.T) {
	long := strings.Repeat("x", MaxDescription+1)
	for _, tc := range []struct{ name, manifest, want string }{
		{"no front matter", "# Just text\n", "must start with YAML front matter"},
		{"unclosed", "---\nname: a\ndescription: b\n", "no closing ---"},
		{"broken yaml", "---\nname: [a\ndescription: b\n---\n", "not valid YAML"},
		{"missing name", "---\ndescription: b\n---\n", "has no name"},
		{"missing description", "---\nname: abc\n---\n", "no description"},
		{"blank description", "---\nname: abc\ndescription: \"   \"\n---\n", "no description"},
		{"long description", "---\nname: abc\ndescription: " + long + "\n---\n", "at most 1024"},
		{"path name", "---\nname: ../x\ndescription: b\n---\n", "is not a skill name"},
		{"slash name", "---\nname: a/b\ndescription: b\n---\n", "is not a skill name"},
		{"upper case", "---\nname: Deploy\ndescription: b\n---\n", "is not a skill name"},
		{"hyphen end", "---\nname: deploy-\ndescription: b\n---\n", "is not a skill name"},
		{"too long name", "---\nname: " + strings.Repeat("a", 65) + "\ndescription: b\n---\n", "is not a skill name"},
		{"control chars", "---\nname: abc\ndescription: \"a\\u0007b\"\n---\n", "control or invisible"},
		{"right-to-left override", "---\nname: abc\ndescription: \"safe \\u202egpj.sh\"\n---\n", "control or invisible"},
		{"not utf8", "---\nname: abc\ndescription: \xff\n---\n", "not UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, _, err := ParseManifest([]byte(tc.manifest))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
	name, desc, body, err := ParseManifest([]byte("\ufeff---\r\nname: abc\r\ndescription: |\r\n  two\r\n  lines\r\n---"))
	if err != nil || name != "abc" || desc != "two lines" || body != "" {
		t.Fatalf("CRLF, BOM, folded description, empty body = %q %q %q %v", name, desc, body, err)
	}
}

// TestReadFolderRefusesWhatMustNotBePublished: no manifest, too many
// files, a file or the whole too large, a bad name.
func TestReadFolderRefusesWhatMustNotBePublished(t *testing.T) {
	many := map[string]string{"SKILL.md": goodManifest}
	for i := range MaxFiles {
		many[fmt.Sprintf("f%02d.txt", i)] = "x"
	}
	big := map[string]string{"SKILL.md": goodManifest}
	for i := range 5 {
		big[fmt.Sprintf("part%d.bin", i)] = strings.Repeat("x", MaxFileBytes)
	}
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"no manifest", map[string]string{"README.md": "hi"}, "there is no SKILL.md"},
		{"too many files", many, "more than 50 files"},
		{"file too large", map[string]string{"SKILL.md": goodManifest, "big.bin": strings.Repeat("x", MaxFileBytes+1)}, "larger than"},
		{"too large in all", big, "more than 1048576 bytes together"},
		{"bad manifest", map[string]string{"SKILL.md": "---\nname: ../../etc\ndescription: x\n---\n"}, "is not a skill name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadFolder(writeSkill(t, tc.files))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestReadFolderRefusesSymlinks: a symlinked file, manifest or folder is
// refused, never followed out of the folder.
func TestReadFolderRefusesSymlinks(t *testing.T) {
	outside := writeSkill(t, map[string]string{"secret.txt": "password"})
	for _, link := range []string{"secret.txt", "SKILL.md", "sub"} {
		t.Run(link, func(t *testing.T) {
			dir := writeSkill(t, map[string]string{"SKILL.md": goodManifest})
			if link == "SKILL.md" {
				_ = os.Remove(filepath.Join(dir, "SKILL.md"))
			}
			target := filepath.Join(outside, "secret.txt")
			if link == "sub" {
				target = outside
			}
			if err := os.Symlink(target, filepath.Join(dir, link)); err != nil {
				t.Fatal(err)
			}
			_, err := ReadFolder(dir)
			if err == nil || !strings.Contains(err.Error(), "symbolic link") {
				t.Fatalf("err = %v, want the symlink refused", err)
			}
		})
	}
}

// TestFromFilesRefusesPathsOutsideTheFolder: stored file paths must be
// clean, relative and unique.
func TestFromFilesRefusesPathsOutsideTheFolder(t *testing.T) {
	for _, p := range []string{"../x", "/etc/passwd", "a/../../b", "a//b", "a\\b", "", "a\x00b", "./a", "run\u202egpj.sh"} {
		_, err := FromFiles([]File{{Path: "SKILL.md", Data: []byte(goodManifest)}, {Path: p, Data: []byte("x")}})
		if err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	if _, err := FromFiles([]File{{Path: "SKILL.md", Data: []byte(goodManifest)}, {Path: "SKILL.md", Data: []byte(goodManifest)}}); err == nil {
		t.Error("a path twice accepted")
	}
}

// writeFile writes content at p, creating its folder.
func writeFile(p, content string) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, []byte(content), 0o644)
}
