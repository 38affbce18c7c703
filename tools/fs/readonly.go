package fs

import (
	"fmt"
	"os"
	"strings"

	"github.com/switchboard-chat/switchboard/tools"
)

// SkillsDir is the workspace folder use_skill puts skills' files in
// (skills/NAME/...). The fs tools read it but never write there: a
// skill's files are what its authors and approvers saw.
const SkillsDir = "skills"

// inSkills reports whether the clean relative path c is SkillsDir or
// inside it.
func inSkills(c string) bool { return c == SkillsDir || strings.HasPrefix(c, SkillsDir+"/") }

// writablePath is openPath for the tools that write: it also refuses
// paths in SkillsDir, or leading there through a symlink.
func (j *jail) writablePath(call tools.Call, p string) (*os.Root, string, error) {
	root, rel, err := j.openPath(call, p)
	if err != nil {
		return nil, "", err
	}
	real, err := resolveLinks(root, rel)
	if err == nil && (inSkills(rel) || inSkills(real)) {
		root.Close()
		return nil, "", fmt.Errorf("%s is in %s/, which is read-only: use_skill keeps the skills' files there as published. "+
			"To change a file, copy it elsewhere in the workspace (read_file, then write_file to e.g. work/%s) and change the copy", p, SkillsDir, strings.TrimPrefix(rel, SkillsDir+"/"))
	}
	return root, rel, nil
}
