package bot

import (
	"fmt"
	"strconv"
	"unicode/utf8"
)

// Inbound text is cut to a size a model can take before it is stored: a
// message is sent to the model again with every later message of its
// window, so one huge message (10 MB pasted into Slack) would otherwise
// fail every run of its conversation until it left the window.
const (
	// maxInboundChars bounds a message on the platforms that allow long
	// ones (Slack's own limit is 40 000 characters; the console has none).
	maxInboundChars = 40_000
	// maxTelegramChars is Telegram's own limit for a message: more can only
	// come from something that is not a Telegram client.
	maxTelegramChars = 4096
)

// inboundLimit is how many characters of a message from platform are read.
func inboundLimit(platform string) int {
	if platform == "telegram" {
		return maxTelegramChars
	}
	return maxInboundChars
}

// capInbound returns text cut to limit characters, on a character
// boundary, with a marker saying how many were cut, and that number (0
// when text fits).
func capInbound(text string, limit int) (string, int) {
	if len(text) <= limit { // bytes ≥ characters
		return text, 0
	}
	end, n := 0, 0
	for end < len(text) && n < limit {
		_, size := utf8.DecodeRuneInString(text[end:])
		end += size
		n++
	}
	cut := utf8.RuneCountInString(text[end:])
	if cut == 0 {
		return text, 0
	}
	return text[:end] + fmt.Sprintf("\n[… message cut: %s more characters not read]", spacedDigits(cut)), cut
}

// cutNotice tells the person their message was cut.
func cutNotice(limit, cut int) string {
	return fmt.Sprintf("Your message was too long: I read only its first %s characters (%s more were cut). Send the rest in shorter messages.",
		spacedDigits(limit), spacedDigits(cut))
}

// spacedDigits writes n with its digits in groups of three ("9 987 654"),
// which reads the same in every language.
func spacedDigits(n int) string {
	s := strconv.Itoa(n)
	out := make([]byte, 0, len(s)+len(s)/3)
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ' ')
		}
		out = append(out, s[i])
	}
	return string(out)
}
