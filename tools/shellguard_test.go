package tools_test

import (
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

// benignCommands are everyday commands the guard must leave to the
// approvers rather than block.
var benignCommands = []string{
	"ls -la",
	"git status",
	`echo "rm -rf /"`,
	"echo rm -rf /",
	`git commit -m "guard against rm -rf /"`,
	"grep -r foo .",
	"cat README.md",
	"python3 script.py",
	"go test ./...",
	"find . -name '*.go' -type f",
	"find . -name '*.pyc' -delete",
	"find . -name '*.o' | xargs rm -f",
	"rm file.txt",
	"rm -rf build/",
	"rm -rf /tmp/switchboard-test",
	"curl -s https://example.com -o page.html",
	"curl -s https://api.example.com/items | jq .",
	"curl -s https://x | python3 -c 'import json,sys; print(json.load(sys.stdin))'",
	"python3 -c 'print(1+1)'",
	"env",
	"printenv",
	"dd if=/dev/zero of=./disk.img bs=1M count=10",
	"echo hi > /dev/null 2>&1",
	"ls 2>/dev/null | wc -l",
	"make -j2 && ./bin/app --help",
	"kill %1; kill 12345",
	"sh ./build.sh",
	"bash -c 'echo hello && ls'",
	"echo 'ls -la' | sh",
	"npm test",
	"tar czf out.tgz src/",
	"sed -i 's/a/b/' main.go",
	"chmod +x script.sh",
	"chmod -R 755 ./dist",
	"[ -f x ] && echo yes",
	`[[ -n "$X" ]] && echo yes`,
	`for f in *.go; do gofmt -l "$f"; done`,
	"ps aux | grep [s]witchboard",
	"export FOO=bar; echo $FOO",
	"cat <<'EOF' > notes.txt\nhello $x\nEOF",
	"awk '{print $1}' file",
	"xargs -n1 echo < list",
	"git log --oneline | head",
	"ssh-keygen -t ed25519 -f ./deploy_key -N ''",
	"timeout 10 go test ./...",
	"nohup ./server > server.log 2>&1 &",
	"systemctl status nginx",
	"sudo apt-get install -y jq",
	"docker ps -a",
	"cat ~/.ssh/id_rsa.pub",
	"git -c core.pager=less log",
	"wc -l < /etc/passwd",
	`python3 - <<'EOF'` + "\nprint('hi')\nEOF",
	"source .venv/bin/activate && pytest",
	"while read -r l; do echo \"$l\"; done < input.txt",
	"cd ~ && ls",
	"cd src && rm -rf build",
	"cd /tmp/job && rm -rf out",
	"diff <(sort a) <(sort b)",
	"echo $'tab\\there'",
}

func TestCheckCommandBlocksBypasses(t *testing.T) {
	if len(bypassCases) < 60 {
		t.Fatalf("bypass table has %d cases, want at least 60", len(bypassCases))
	}
	for _, tc := range bypassCases {
		v, err := tools.CheckCommand(tc.cmd)
		if tc.want == askHuman {
			if v.Blocked {
				t.Errorf("CheckCommand(%q) blocked as %q (%s), want it left to the approvers", tc.cmd, v.Category, v.Reason)
			}
			continue
		}
		if !v.Blocked {
			t.Errorf("CheckCommand(%q) not blocked, want %q", tc.cmd, tc.want)
			continue
		}
		if v.Category != tc.want {
			t.Errorf("CheckCommand(%q) category %q (%s), want %q", tc.cmd, v.Category, v.Reason, tc.want)
		}
		if err != nil && tc.want != unparseable {
			t.Errorf("CheckCommand(%q) err = %v, want an error only for unparseable commands", tc.cmd, err)
		}
	}
}

func TestCheckCommandAllowsBenign(t *testing.T) {
	if len(benignCommands) < 15 {
		t.Fatalf("benign list has %d commands, want at least 15", len(benignCommands))
	}
	for _, cmd := range benignCommands {
		v, err := tools.CheckCommand(cmd)
		if err != nil || v.Blocked {
			t.Errorf("CheckCommand(%q) = %+v, %v; want not blocked", cmd, v, err)
		}
	}
}

func TestCheckCommandRejectsUnusableText(t *testing.T) {
	for _, cmd := range []string{"", "   ", "echo a\x00b", "echo " + strings.Repeat("a", 70<<10)} {
		v, err := tools.CheckCommand(cmd)
		if !v.Blocked || v.Category != tools.CategoryUnparseable || err == nil {
			t.Errorf("CheckCommand(%.20q) = %+v, %v; want blocked as unparseable with an error", cmd, v, err)
		}
	}
}

func TestCheckCommandBoundsNesting(t *testing.T) {
	v, _ := tools.CheckCommand(strings.Repeat("eval ", 12) + "true")
	if !v.Blocked || v.Category != tools.CategoryEvalInjection {
		t.Errorf("12 nested evals: %+v, want blocked as too deeply nested", v)
	}
	v, _ = tools.CheckCommand(strings.Repeat("eval ", 3) + "true")
	if v.Blocked {
		t.Errorf("3 nested evals blocked: %+v", v)
	}
}

func TestCheckCommandReasonHasNoArguments(t *testing.T) {
	v, _ := tools.CheckCommand("cat /proc/self/environ SECRETVALUE123")
	if !v.Blocked || strings.Contains(v.Reason, "SECRETVALUE123") || strings.Contains(v.Reason, "/proc") {
		t.Errorf("verdict %+v: want blocked with a reason that does not echo arguments", v)
	}
}
