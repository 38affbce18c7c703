package telegramtest

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// entityKinds maps the tags of Telegram's HTML parse mode to the kind of
// entity they make.
var entityKinds = map[string]string{
	"b": "bold", "strong": "bold",
	"i": "italic", "em": "italic",
	"u": "underline", "ins": "underline",
	"s": "strikethrough", "strike": "strikethrough", "del": "strikethrough",
	"span": "spoiler", "tg-spoiler": "spoiler",
	"a":          "text_link",
	"code":       "code",
	"pre":        "pre",
	"blockquote": "blockquote",
	"tg-emoji":   "custom_emoji",
}

// styleKinds may contain, and sit inside, any entity except code and pre.
var styleKinds = map[string]bool{"bold": true, "italic": true, "underline": true, "strikethrough": true, "spoiler": true}

// openTag is a start tag waiting for its end tag.
type openTag struct {
	name, kind string
	offset     int
}

// ParseHTML parses text in Telegram's HTML parse mode and returns the text a
// reader sees. It fails, like Telegram's "can't parse entities", on tags
// outside the supported set, unbalanced or crossed tags, nesting Telegram's
// rules forbid (nothing inside code or pre but <code> in <pre>, no nested
// blockquotes, links, code, pre and blockquotes not inside one another) and
// on '<' or '&' that do not start a tag or a supported entity (&lt; &gt;
// &amp; &quot; and numeric references). It is stricter than Telegram where
// Telegram is lenient, to catch rendering bugs early.
func ParseHTML(text string) (string, error) {
	var out strings.Builder
	var stack []openTag
	for i := 0; i < len(text); {
		switch text[i] {
		case '<':
			end := strings.IndexByte(text[i:], '>')
			if end < 0 {
				return "", fmt.Errorf("unclosed start tag at byte offset %d", i)
			}
			var err error
			stack, err = parseTagAt(stack, text[i+1:i+end], i)
			if err != nil {
				return "", err
			}
			i += end + 1
		case '&':
			n, r, ok := entity(text[i:])
			if !ok {
				return "", fmt.Errorf("unsupported HTML entity or unescaped '&' at byte offset %d", i)
			}
			out.WriteString(r)
			i += n
		default:
			out.WriteByte(text[i])
			i++
		}
	}
	if len(stack) > 0 {
		return "", fmt.Errorf("Can't find end tag corresponding to start tag \"%s\"", stack[len(stack)-1].name)
	}
	if !utf8.ValidString(out.String()) {
		return "", fmt.Errorf("text must be encoded in UTF-8")
	}
	return out.String(), nil
}

// parseTagAt applies the tag with content tag (between < and >) at offset.
func parseTagAt(stack []openTag, tag string, offset int) ([]openTag, error) {
	if name, ok := strings.CutPrefix(tag, "/"); ok {
		name = strings.ToLower(strings.TrimSpace(name))
		if len(stack) == 0 {
			return nil, fmt.Errorf("unexpected end tag at byte offset %d", offset)
		}
		if top := stack[len(stack)-1]; top.name != name {
			return nil, fmt.Errorf("Unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", offset, top.name, name)
		}
		return stack[:len(stack)-1], nil
	}
	name, attrs, err := parseTag(tag)
	if err != nil {
		return nil, fmt.Errorf("%w at byte offset %d", err, offset)
	}
	kind, ok := entityKinds[name]
	if !ok {
		return nil, fmt.Errorf("Unsupported start tag \"%s\" at byte offset %d", name, offset)
	}
	var parent *openTag
	if len(stack) > 0 {
		parent = &stack[len(stack)-1]
	}
	switch name {
	case "a":
		if attrs["href"] == "" {
			return nil, fmt.Errorf("link without href at byte offset %d", offset)
		}
	case "span":
		if attrs["class"] != "tg-spoiler" {
			return nil, fmt.Errorf("Unsupported start tag \"span\" at byte offset %d", offset)
		}
	case "tg-emoji":
		if attrs["emoji-id"] == "" {
			return nil, fmt.Errorf("custom emoji without emoji-id at byte offset %d", offset)
		}
	case "code":
		if class, ok := attrs["class"]; ok && (!strings.HasPrefix(class, "language-") || parent == nil || parent.kind != "pre") {
			return nil, fmt.Errorf("code class outside pre at byte offset %d", offset)
		}
	}
	for k, o := range stack {
		if err := canNest(o, kind, k == len(stack)-1); err != nil {
			return nil, fmt.Errorf("%w at byte offset %d", err, offset)
		}
	}
	if parent != nil && parent.kind == "pre" && kind == "code" {
		kind = "pre_code" // the language holder of a code block
	}
	return append(stack, openTag{name: name, kind: kind, offset: offset}), nil
}

// canNest reports whether an entity of kind inner may start inside outer;
// direct says outer is its immediate parent.
func canNest(outer openTag, inner string, direct bool) error {
	switch outer.kind {
	case "code", "pre_code":
		return fmt.Errorf("entities can't be nested in <%s>", outer.name)
	case "pre":
		if inner == "code" && direct {
			return nil
		}
		return fmt.Errorf("entities can't be nested in <pre> except <code>")
	}
	if styleKinds[outer.kind] || styleKinds[inner] {
		return nil
	}
	return fmt.Errorf("%s entities can't contain %s entities", outer.kind, inner)
}

// parseTag splits a start tag into its lower-case name and attributes.
func parseTag(tag string) (string, map[string]string, error) {
	tag = strings.TrimSuffix(strings.TrimSpace(tag), "/")
	end := strings.IndexAny(tag, " \t\n\r")
	if end < 0 {
		end = len(tag)
	}
	name := strings.ToLower(tag[:end])
	if name == "" {
		return "", nil, fmt.Errorf("empty tag name")
	}
	attrs := map[string]string{}
	rest := strings.TrimSpace(tag[end:])
	for rest != "" {
		eq := strings.IndexAny(rest, "= \t\n\r")
		if eq < 0 {
			attrs[strings.ToLower(rest)] = ""
			break
		}
		key := strings.ToLower(rest[:eq])
		rest = strings.TrimLeft(rest[eq:], " \t\n\r")
		if !strings.HasPrefix(rest, "=") {
			attrs[key] = ""
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\n\r")
		var val string
		if rest != "" && (rest[0] == '"' || rest[0] == '\'') {
			close := strings.IndexByte(rest[1:], rest[0])
			if close < 0 {
				return "", nil, fmt.Errorf("unclosed attribute value")
			}
			val, rest = rest[1:1+close], rest[close+2:]
		} else {
			sp := strings.IndexAny(rest, " \t\n\r")
			if sp < 0 {
				sp = len(rest)
			}
			val, rest = rest[:sp], rest[sp:]
		}
		decoded, err := decodeEntities(val)
		if err != nil {
			return "", nil, err
		}
		attrs[key] = decoded
		rest = strings.TrimSpace(rest)
	}
	return name, attrs, nil
}

func decodeEntities(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '&' {
			b.WriteByte(s[i])
			i++
			continue
		}
		n, r, ok := entity(s[i:])
		if !ok {
			return "", fmt.Errorf("unsupported HTML entity in attribute")
		}
		b.WriteString(r)
		i += n
	}
	return b.String(), nil
}

// entity decodes the character reference at the start of s: its length in
// bytes and the text it stands for.
func entity(s string) (int, string, bool) {
	end := strings.IndexByte(s, ';')
	if end < 0 || end > 12 {
		return 0, "", false
	}
	name := s[1:end]
	switch name {
	case "lt":
		return end + 1, "<", true
	case "gt":
		return end + 1, ">", true
	case "amp":
		return end + 1, "&", true
	case "quot":
		return end + 1, `"`, true
	}
	num, ok := strings.CutPrefix(name, "#")
	if !ok || num == "" {
		return 0, "", false
	}
	base := 10
	if hex, ok := strings.CutPrefix(strings.ToLower(num), "x"); ok {
		num, base = hex, 16
	}
	v, err := strconv.ParseUint(num, base, 32)
	if err != nil || v == 0 || v > utf8.MaxRune || (v >= 0xD800 && v <= 0xDFFF) {
		return 0, "", false
	}
	return end + 1, string(rune(v)), true
}
