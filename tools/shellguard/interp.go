package shellguard

import (
	"regexp"
	"strings"
)

// interpSpec describes an interpreter's command-line flags.
type interpSpec struct {
	code      string   // short options whose value is program text (-c, -e)
	longCode  []string // long options whose value is program text (--eval)
	argOpts   string   // short options that take a value
	attached  string   // short options whose value is the rest of the cluster
	fileOpts  string   // short options whose value is the program file
	stop      string   // short options after which no inline program follows (python -m)
	noStdin   bool     // never reads its program from stdin
	firstCode bool     // the first operand is the program (awk)
}

var interpSpecs = map[string]interpSpec{
	"python": {code: "c", argOpts: "WXQ", stop: "m"},
	"perl":   {code: "eE", attached: "MmIxl0idDCV"},
	"ruby":   {code: "e", argOpts: "rICEF", attached: "0lxTWKd"},
	"node":   {code: "ep", longCode: []string{"eval", "print"}, argOpts: "r", attached: ""},
	"php":    {code: "rRBE", argOpts: "cdz", fileOpts: "fF"},
	"lua":    {code: "e", argOpts: "l"},
	"r":      {code: "e"},
	"tcl":    {},
	"awk":    {code: "e", longCode: []string{"source"}, argOpts: "vF", fileOpts: "f", noStdin: true, firstCode: true},
	"pwsh":   {code: "c", longCode: []string{"command"}, fileOpts: "f"},
}

// interpreter checks python, perl, ruby, node, php, awk… Inline programs are
// scanned for reverse shells, fork bombs and the shell commands they run;
// a program only known at run time or read from a computed stdin is blocked.
func (c *checker) interpreter(prog, family string, args []arg, in stdin, depth int) {
	spec := interpSpecs[family]
	if family == "pwsh" {
		for _, a := range args {
			if low := strings.ToLower(a.val); a.lit && strings.HasPrefix(low, "-e") {
				c.block(CategoryEvalInjection, prog+" runs an encoded command")
				return
			}
		}
	}
	o, i, end := scanInterpOptions(spec, family, args)
	switch end {
	case interpStdinDash:
		c.stdinProgram(prog, family, in, depth)
		return
	case interpStopped:
		return
	}
	if len(o.modules) > 0 {
		c.inlineCode(prog, family, o.modules, args, depth)
		if c.verdict != nil {
			return
		}
	}
	c.interpProgram(prog, family, spec, o, args[min(i, len(args)):], args, in, depth)
}

// interpProgram checks the program an interpreter runs once its options
// are read: inline code, a program file, or stdin. rest are the operands
// after the options; args are all the arguments.
func (c *checker) interpProgram(prog, family string, spec interpSpec, o interpOpts, rest, args []arg, in stdin, depth int) {
	codes := o.codes
	if spec.firstCode && !o.hasFile && len(codes) == 0 && len(rest) > 0 {
		codes = append(codes, rest[0])
	}
	if len(codes) > 0 {
		for _, code := range codes {
			if !code.lit {
				c.dynamicCode(prog, code)
				return
			}
		}
		c.inlineCode(prog, family, codes, args, depth)
		return
	}
	if o.hasFile || spec.noStdin {
		return
	}
	if len(rest) == 0 {
		c.stdinProgram(prog, family, in, depth)
		return
	}
	if file := rest[0]; file.lit && (stdinPaths[file.val] || file.val == "-") {
		c.stdinProgram(prog, family, in, depth)
		return
	}
	c.scriptFile(prog, rest[0], in, depth)
}

// interpOpts is what an interpreter's options say about its program.
type interpOpts struct {
	codes   []arg // inline program text (-c, -e, --eval)
	modules []arg // perl's -M'Mod;code', which is code too
	hasFile bool  // an option names the program file (-f)
}

// interpEnd says how the options of an interpreter ended.
type interpEnd int

const (
	interpOperands  interpEnd = iota // at the first operand, or after "--"
	interpStdinDash                  // at "-" before any code: the program is stdin
	interpStopped                    // at an option after which no inline program follows
)

// scanInterpOptions reads an interpreter's options up to its first operand
// and returns what they say, the index of that operand and how they ended.
func scanInterpOptions(spec interpSpec, family string, args []arg) (o interpOpts, i int, end interpEnd) {
	for i < len(args) {
		a := args[i]
		if !a.lit {
			break
		}
		v := a.val
		switch {
		case v == "-":
			if len(o.codes) == 0 && !spec.noStdin {
				return o, i, interpStdinDash
			}
			return o, i, interpOperands
		case v == "--":
			return o, i + 1, interpOperands
		case strings.HasPrefix(v, "--") || (family == "pwsh" && len(v) > 2 && v[0] == '-'):
			name, val, hasValue := strings.Cut(strings.TrimLeft(v, "-"), "=")
			i++
			if containsFold(spec.longCode, name) {
				switch {
				case hasValue:
					o.codes = append(o.codes, withVal(a, val))
				case i < len(args):
					o.codes = append(o.codes, args[i])
					i++
				}
			}
		case strings.HasPrefix(v, "-") && len(v) > 1:
			var stopped bool
			if i, stopped = o.shortCluster(spec, family, args, i); stopped {
				return o, i, interpStopped
			}
			if family == "python" && len(o.codes) > 0 {
				return o, i, interpOperands // python -c ends option parsing
			}
		default:
			return o, i, interpOperands
		}
	}
	return o, i, interpOperands
}

// shortCluster reads the cluster of short options at args[i] (-xyz), up to
// the first one the spec knows, and returns the index of the argument
// after it and any value it took; stopped is true at an option after which
// no inline program follows.
func (o *interpOpts) shortCluster(spec interpSpec, family string, args []arg, i int) (next int, stopped bool) {
	a := args[i]
	v := a.val
	i++
	for j := 1; j < len(v); j++ {
		ch := v[j]
		switch {
		case strings.IndexByte(spec.stop, ch) >= 0:
			return i, true
		case strings.IndexByte(spec.code, ch) >= 0:
			if j+1 < len(v) {
				o.codes = append(o.codes, withVal(a, v[j+1:]))
			} else if i < len(args) {
				o.codes = append(o.codes, args[i])
				i++
			}
		case strings.IndexByte(spec.fileOpts, ch) >= 0:
			o.hasFile = true
			if j == len(v)-1 {
				i++
			}
		case strings.IndexByte(spec.argOpts, ch) >= 0:
			if j == len(v)-1 {
				i++
			}
		case strings.IndexByte(spec.attached, ch) >= 0:
			if family == "perl" && (ch == 'M' || ch == 'm') && j+1 < len(v) {
				// -M'Mod;code' is `use Mod;code;`: code.
				o.modules = append(o.modules, withVal(a, v[j+1:]))
			}
		default:
			continue
		}
		return i, false
	}
	return i, false
}

// withVal returns a copy of a with another value.
func withVal(a arg, val string) arg {
	a.val = val
	return a
}

func containsFold(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Words that, found together in an inline program, make a reverse shell or
// a fork bomb, or mean it runs shell commands.
var (
	socketWords = []string{"socket", "fsockopen", "net.connect", "createconnection", "/dev/tcp/", "/dev/udp/",
		"/inet/tcp", "/inet/udp", "stream_socket_client"}
	spawnWords = []string{"subprocess", "spawn", "exec", "system", "popen", "dup2", "/bin/sh", "/bin/bash",
		"cmd.exe", "child_process", "proc_open", "passthru", "pty", "`"}
	loopWords     = []string{"while", "for ", "for(", "loop", "until", "forever", "repeat"}
	shellOutWords = []string{"system", "popen", "exec", "spawn", "subprocess", "`", "%x", "qx", "passthru",
		"proc_open", "child_process", "check_output", "getline", "| \"", "|\"", "os.run", "io.popen"}
)

func containsAnyOf(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// inlineCode checks the program text given to an interpreter.
func (c *checker) inlineCode(prog, family string, codes, args []arg, depth int) {
	var all strings.Builder
	for _, a := range args {
		all.WriteString(a.val)
		all.WriteByte(' ')
	}
	low := strings.ToLower(all.String())
	switch {
	case containsAnyOf(low, socketWords) && (containsAnyOf(low, spawnWords) || family == "awk"):
		c.block(CategoryReverseShell, prog+" code connects a socket to a process")
		return
	case strings.Contains(low, "fork") && containsAnyOf(low, loopWords):
		c.block(CategoryForkBomb, prog+" code forks in a loop")
		return
	}
	if containsAnyOf(low, treeDeleteWords) {
		for _, code := range codes {
			for _, lit := range stringLiterals(code.val) {
				if outsideWorkspacePath(lit) {
					c.block(CategoryDestructive, prog+" code deletes a directory tree outside the workspace")
					return
				}
			}
		}
	}
	if containsAnyOf(low, nameBuildingWords) && buildsStrings(low) {
		c.block(CategoryEvalInjection, prog+" code builds the names it calls from pieces, hiding what it runs")
		return
	}
	if containsAnyOf(low, fetchWords) && evalCall.MatchString(low) {
		c.block(CategoryRemoteCode, prog+" code downloads code and runs it")
		return
	}
	if setuidChmod.MatchString(low) {
		c.block(CategoryPrivilege, prog+" code sets the setuid/setgid bit")
		return
	}
	if !containsAnyOf(low, shellOutWords) {
		return
	}
	for _, code := range codes {
		c.embeddedCommands(prog, code.val, depth)
	}
}

// fetchWords are library calls and programs that download.
var fetchWords = []string{"urlopen", "urllib", "requests.get", "requests.post", "requests.request", "httpx", "http.client",
	"urlretrieve", "lwp", "http::tiny", "http::request", "net::http", "open-uri", "uri.open", "fetch(", "https.get",
	"http.get", "https.request", "http.request", "axios", "file_get_contents(\"http", "file_get_contents('http",
	"curl", "wget", "socket.http", `require("http`, `require('http`, "from 'http", `from "http`, "invoke-webrequest", "downloadstring", "iwr ", "net.webclient"}

// evalCall matches calls that run text as code: eval, exec, new
// Function, vm.runIn…Context, load, instance_eval, Invoke-Expression.
var evalCall = regexp.MustCompile(`\b(eval|exec|execfile|runinthiscontext|runinnewcontext|instance_eval|class_eval|module_eval|loadstring|load|iex|invoke-expression)\b\s*[\(\s"'$]|\bnew\s+function\b|\beval\b`)

// setuidChmod matches a chmod call in code with a mode that sets the setuid
// or setgid bit (0o4755, 04755, "4755", stat.S_ISUID).
var setuidChmod = regexp.MustCompile(`chmod[a-z_]*\s*\(?[^;\n]*?(\b0o?[2-7][0-7]{3}\b|["'][2-7][0-7]{3}["']|s_isuid|s_isgid|\bu\+s\b|\bg\+s\b)`)

// treeDeleteWords are library calls that delete a directory tree
// (shutil.rmtree, File::Path rmtree, fs.rmSync, FileUtils.rm_rf…).
var treeDeleteWords = []string{"rmtree", "rmsync", "rm_rf", "rm_r(", "remove_tree", "rimraf", "removeall(", "remove_dir_all", "rmdirsync"}

// nameBuildingWords look names up at run time; with string pieces glued
// together they hide what a program calls: getattr(os, "sys"+"tem").
var nameBuildingWords = []string{"getattr(", "__import__(", "importlib", "globals()[", "__builtins__", "send(:", "method(", "const_get("}

// buildsStrings reports whether code glues string literals together.
func buildsStrings(code string) bool {
	for _, glue := range []string{`"+"`, `" + "`, `'+'`, `' + '`, `"+'`, `'+"`, `".."`, `" .. "`, `"."`, `" . "`, `".join(`, `''.join(`, `[::-1]`, `chr(`} {
		if strings.Contains(code, glue) {
			return true
		}
	}
	return false
}

// outsideWorkspacePath reports whether lit, a string literal of inline
// code, names a path outside the workspace: absolute, home, or upwards.
func outsideWorkspacePath(lit string) bool {
	lit = strings.TrimSpace(lit)
	return strings.HasPrefix(lit, "/") || strings.HasPrefix(lit, "~") || lit == ".." ||
		strings.HasPrefix(lit, "../") || strings.Contains(lit, "/../") || strings.HasPrefix(lit, "$HOME")
}

// embeddedCommands checks the string literals of an inline program that
// runs shell commands: os.system("rm -rf /"), ["rm", "-rf", "/"].
func (c *checker) embeddedCommands(prog, code string, depth int) {
	lits := append(stringLiterals(code), quoteLikeLiterals(code)...)
	var candidates []string
	for i := range lits {
		candidates = append(candidates, lits[i])
		if i+1 < len(lits) {
			candidates = append(candidates, strings.Join(lits[i:min(i+8, len(lits))], " "))
		}
	}
	for _, cand := range candidates {
		if strings.TrimSpace(cand) == "" {
			continue
		}
		sub := &checker{work: c.work}
		sub.script(cand, depth+1, stdin{kind: stdinUnknown})
		c.work = sub.work
		for _, w := range sub.warnings {
			c.warn(w)
		}
		v := sub.verdict
		if v == nil || v.Category == CategoryUnparseable ||
			(v.Category == CategoryEvalInjection && strings.HasPrefix(v.Reason, "obfuscated")) {
			if c.work > maxWork {
				c.block(CategoryUnparseable, "the command is too large to analyse")
				return
			}
			continue
		}
		c.block(v.Category, v.Reason+" (inside "+prog+" code)")
		return
	}
}

// stringLiterals returns the quoted strings in program text, bounded in
// number and size.
func stringLiterals(code string) []string {
	var out []string
	for i := 0; i < len(code) && len(out) < 64; i++ {
		q := code[i]
		if q != '\'' && q != '"' && q != '`' {
			continue
		}
		var b strings.Builder
		j := i + 1
		for ; j < len(code) && code[j] != q; j++ {
			if code[j] == '\\' && j+1 < len(code) {
				j++
			}
			b.WriteByte(code[j])
		}
		if j >= len(code) {
			break
		}
		if b.Len() <= 4096 {
			out = append(out, b.String())
		}
		i = j
	}
	return out
}

// quoteLike matches the start of Perl's and Ruby's quote-like operators
// whose text is a string or a shell command: qx(…), q{…}, qq[…], %x(…),
// %Q{…}.
var quoteLike = regexp.MustCompile(`(\bqx|\bqq|\bq|%x|%Q|%q)\s*([(\[{<|/!#])`)

// quoteLikeLiterals returns the text of quote-like operators in program
// text, bounded in number and size; brackets nest.
func quoteLikeLiterals(code string) []string {
	pairs := map[byte]byte{'(': ')', '[': ']', '{': '}', '<': '>'}
	var out []string
	for _, m := range quoteLike.FindAllStringSubmatchIndex(code, 64) {
		open := code[m[4]]
		close, nests := pairs[open]
		if !nests {
			close = open
		}
		depth, start := 1, m[5]
		for j := start; j < len(code); j++ {
			switch {
			case code[j] == '\\':
				j++
			case nests && code[j] == open:
				depth++
			case code[j] == close:
				depth--
			}
			if depth == 0 {
				if j-start <= 4096 {
					out = append(out, code[start:j])
				}
				break
			}
		}
	}
	return out
}
