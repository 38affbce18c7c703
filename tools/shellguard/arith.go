package shellguard

import (
	"regexp"

	"mvdan.cc/sh/v3/syntax"
)

// subscriptCommand matches an array subscript holding a command
// substitution: a[$(cmd)], a[`cmd`]. Bash runs that command whenever such
// a value is used as a number ($((x)), [[ x -eq 1 ]], declare -i, let), so
// a quoted value of this shape is code hidden from the parser.
var subscriptCommand = regexp.MustCompile("[A-Za-z_][A-Za-z0-9_]*\\[[^\\]]*(\\$\\(|`)")

// arithmeticBuiltins take values that bash may evaluate as arithmetic.
var arithmeticBuiltins = setOf("let", "declare", "typeset", "local", "export", "readonly", "printf", "test", "[", "[[")

// arithmeticInjection blocks a known value that hides a command in an array
// subscript, for bash to run when the value is used as a number.
func (c *checker) arithmeticInjection(val string) {
	if subscriptCommand.MatchString(val) {
		c.block(CategoryEvalInjection, "a value hides a command in an array subscript, which bash runs when it is used as a number")
	}
}

// arithmeticWords checks the words of a let or [[ … ]] clause.
func (c *checker) arithmeticWords(node syntax.Node) {
	syntax.Walk(node, func(n syntax.Node) bool {
		if w, ok := n.(*syntax.Word); ok {
			c.arithmeticInjection(evalParts(w.Parts).val)
			return false
		}
		return c.verdict == nil
	})
}
