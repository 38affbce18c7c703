package shellguard

import "strings"

// find checks -delete on paths outside the workspace, and the commands of
// -exec/-execdir/-ok/-okdir with {} standing for each start path.
func (c *checker) find(args []arg, in stdin, depth int) {
	i := 0
	for i < len(args) && args[i].lit {
		v := args[i].val
		if v == "-H" || v == "-L" || v == "-P" || strings.HasPrefix(v, "-O") {
			i++
			continue
		}
		if v == "-D" {
			i += 2
			continue
		}
		break
	}
	var starts []arg
	for i < len(args) {
		a := args[i]
		if a.lit && (strings.HasPrefix(a.val, "-") || a.val == "(" || a.val == "!" || a.val == ",") {
			break
		}
		starts = append(starts, a)
		i++
	}
	if len(starts) == 0 {
		starts = []arg{literalArg(".")}
	}
	for ; i < len(args) && c.verdict == nil; i++ {
		switch args[i].val {
		case "-delete":
			for _, s := range starts {
				if reason := outsideTarget(s); reason != "" || systemTarget(s) || c.cwdOutside {
					c.block(CategoryDestructive, "find -delete on "+orDefault(reason, "a directory outside the workspace"))
					return
				}
			}
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && !(args[j].lit && (args[j].val == ";" || args[j].val == "+")) {
				j++
			}
			cmd := args[i+1 : j]
			for _, s := range starts {
				c.simple(substituteBraces(cmd, s), in, depth)
			}
			i = j
		case "-fprint", "-fprint0", "-fprintf", "-fls":
			if i+1 < len(args) {
				c.writePath(args[i+1], "find output")
			}
		}
	}
}

// substituteBraces replaces {} in find -exec arguments with a start path.
func substituteBraces(cmd []arg, start arg) []arg {
	out := make([]arg, len(cmd))
	for k, a := range cmd {
		switch {
		case k > 0 && a.lit && a.val == "{}":
			out[k] = start
		case k > 0 && strings.Contains(a.val, "{}"):
			b := a
			b.val = strings.ReplaceAll(a.val, "{}", start.val)
			b.lit = a.lit && start.lit
			b.head = strings.HasPrefix(a.val, "{}") && start.head
			out[k] = b
		default:
			out[k] = a
		}
	}
	return out
}
