package shellguard

import "strings"

// codeVariable checks assignments to variables whose value some program
// later runs as code (BASH_ENV, PROMPT_COMMAND, GIT_SSH_COMMAND…).
func (c *checker) codeVariable(name string, val arg, in stdin, depth int) {
	switch {
	case strings.HasPrefix(name, "BASH_FUNC_"):
		c.block(CategoryEvalInjection, "exported shell functions run hidden code")
	case strings.HasPrefix(name, "GIT_CONFIG_VALUE_"):
		// GIT_CONFIG_COUNT/KEY_n/VALUE_n set any git config key, command
		// keys (core.sshCommand, alias.x=!…) included: judge the value as
		// a command.
		if !val.lit {
			c.dynamicCode(name, val)
			return
		}
		c.script(strings.TrimPrefix(val.val, "!"), depth+1, in)
	case name == "LD_PRELOAD" || name == "LD_AUDIT":
		c.warn(name + " loads a library into every program the command starts")
	case name == "PERL5OPT":
		// -M'Mod;code' runs code in every perl.
		code := []arg{val}
		c.inlineCode("perl", "perl", code, code, depth)
		c.warn("PERL5OPT adds modules or code to every perl the command starts")
	case interpreterOptionVariables[name] != "":
		c.warn(name + " adds options or code to every " + interpreterOptionVariables[name] + " the command starts")
	case name == "GIT_ALLOW_PROTOCOL" && strings.Contains(val.val, "ext"):
		c.warn("git may run commands given as ext:: repository addresses")
	case name == "BASH_ENV" || name == "ENV":
		c.scriptFile(name, val, in, depth)
	case name == "PS1" || name == "PS2" || name == "PS3" || name == "PS4":
		if strings.Contains(val.val, "$(") || strings.Contains(val.val, "`") {
			c.block(CategoryEvalInjection, "a prompt variable runs a command")
		}
	case codeVariables[name]:
		if !val.lit {
			c.dynamicCode(name, val)
			return
		}
		c.script(strings.TrimLeft(val.val, "|"), depth+1, in)
	}
}

// interpreterOptionVariables name the interpreter each variable changes.
var interpreterOptionVariables = map[string]string{"RUBYOPT": "ruby", "NODE_OPTIONS": "node", "PYTHONSTARTUP": "python",
	"PYTHONWARNINGS": "python", "JAVA_TOOL_OPTIONS": "java", "_JAVA_OPTIONS": "java", "JDK_JAVA_OPTIONS": "java"}

// codeVariables hold commands that git, less, man and editors run.
var codeVariables = setOf("PROMPT_COMMAND", "GIT_SSH_COMMAND", "GIT_PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
	"GIT_EXTERNAL_DIFF", "PAGER", "MANPAGER", "EDITOR", "VISUAL", "LESSOPEN", "LESSCLOSE", "SYSTEMD_PAGER",
	"GIT_PROXY_COMMAND", "GIT_ASKPASS", "SSH_ASKPASS", "RSYNC_RSH")
