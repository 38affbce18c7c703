package console

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/switchboard-chat/switchboard/channels"
)

// setChoices records (and prints) the buttons of message id, or forgets
// them when there are none. Callers hold c.mu.
func (c *Channel) setChoices(id int64, rows [][]channels.Button) {
	var flat []channels.Button
	for _, row := range rows {
		flat = append(flat, row...)
	}
	if len(flat) == 0 {
		delete(c.choices, id)
		return
	}
	c.choices[id] = flat
	var b strings.Builder
	fmt.Fprintf(&b, "#%d ", id)
	for i, btn := range flat {
		fmt.Fprintf(&b, "  %d) %s", i+1, btn.Label)
	}
	fmt.Fprintf(&b, "\n    type %s to choose (a number answers the newest request), or /allow %d, /deny %d",
		numberRange(len(flat)), id, id)
	c.writeLines(b.String())
}

// numberRange is "1" or "1-n".
func numberRange(n int) string {
	if n == 1 {
		return "1"
	}
	return "1-" + strconv.Itoa(n)
}

// pressFor reads line as a press: a choice's number (on the newest message
// with choices), or "/allow N" / "/deny N" (on message #N). handled is
// false when line is a message for the agent; a line that looks like a
// press but names nothing open is answered here and presses nothing
// (press nil, handled true). A bare number is a message when no choice is
// open, so the agent can still be told "3".
func (c *Channel) pressFor(line string) (press *channels.ButtonPress, handled bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f := strings.Fields(line)
	switch {
	case len(f) > 0 && (f[0] == "/allow" || f[0] == "/deny"):
		return c.pressByName(f), true
	case len(f) == 1 && isNumber(f[0]) && len(c.choices) > 0:
		newest := slices.Max(slices.Collect(maps.Keys(c.choices)))
		n, _ := strconv.Atoi(f[0])
		if n < 1 || n > len(c.choices[newest]) {
			c.noteLocked(fmt.Sprintf("(#%d has choices %s; %s pressed nothing)", newest, numberRange(len(c.choices[newest])), f[0]))
			return nil, true
		}
		return pressOn(newest, c.choices[newest][n-1]), true
	}
	return nil, false
}

// pressByName handles "/allow N" and "/deny N". Callers hold c.mu.
func (c *Channel) pressByName(f []string) *channels.ButtonPress {
	if len(f) != 2 || !isNumber(strings.TrimPrefix(f[1], "#")) {
		c.noteLocked("(type " + f[0] + " N, N being the request's #number)")
		return nil
	}
	id, _ := strconv.ParseInt(strings.TrimPrefix(f[1], "#"), 10, 64)
	buttons, ok := c.choices[id]
	if !ok {
		c.noteLocked(fmt.Sprintf("(#%d has no open choices; %s)", id, c.openList()))
		return nil
	}
	want := []string{"deny"}
	if f[0] == "/allow" {
		want = []string{"allow", "approve"}
	}
	for _, b := range buttons {
		label := strings.ToLower(b.Label)
		for _, w := range want {
			if strings.HasPrefix(label, w) {
				return pressOn(id, b)
			}
		}
	}
	c.noteLocked(fmt.Sprintf("(#%d has no %s choice; type its number instead)", id, strings.TrimPrefix(f[0], "/")))
	return nil
}

// openList names the messages with open choices.
func (c *Channel) openList() string {
	if len(c.choices) == 0 {
		return "nothing is waiting for a decision"
	}
	ids := slices.Sorted(maps.Keys(c.choices))
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = "#" + strconv.FormatInt(id, 10)
	}
	return "open: " + strings.Join(names, ", ")
}

// pressOn is a press on button b of message id; the channel fills in the
// press id when it delivers it.
func pressOn(id int64, b channels.Button) *channels.ButtonPress {
	return &channels.ButtonPress{Data: b.Data, MessageID: strconv.FormatInt(id, 10)}
}

// noteLocked prints a note of the console's own. Callers hold c.mu.
func (c *Channel) noteLocked(text string) {
	c.startLine()
	c.writeLines(text)
	c.writePrompt()
}

// isNumber reports whether s is a run of ASCII digits.
func isNumber(s string) bool {
	if s == "" || len(s) > 9 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// isBlank reports whether a typed line has nothing but spaces.
func isBlank(s string) bool { return strings.TrimSpace(s) == "" }
