package askuser

import (
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// ButtonKind marks the answer buttons: their data is "qu:<id>:<choice>",
// the choice a letter naming an option by its place ("a" the first).
const ButtonKind = "qu"

// questionText is the message that asks q.
func questionText(q Question) string {
	var b strings.Builder
	fmt.Fprintf(&b, "❓ *Question for %s*\n%s\n\n", q.Asker, q.Text)
	if len(q.Options) > 0 {
		b.WriteString("Press an answer or reply with your own. ")
	} else {
		b.WriteString("Reply with your answer. ")
	}
	fmt.Fprintf(&b, "Waiting until %s UTC; /cancel withdraws it.", q.ExpiresAt.UTC().Format("15:04"))
	return b.String()
}

// outcomeText is what q's message shows once it is no longer pending.
func outcomeText(q Question) string {
	head := "❓ " + q.Text + "\n"
	switch q.Status {
	case StatusAnswered:
		verb := "answered"
		if q.How == ByPress {
			verb = "pressed"
		}
		return head + "✅ " + q.AnsweredBy + " " + verb + ": " + q.Answer
	case StatusCancelled:
		return head + "↩️ Withdrawn by " + q.AnsweredBy + " without an answer."
	}
	return head + "⌛ Nobody answered in time."
}

// buttonsFor are q's answer buttons: one per row, two per row beyond five
// options (Discord shows at most five rows).
func buttonsFor(q Question) [][]channels.Button {
	perRow := 1
	if len(q.Options) > 5 {
		perRow = 2
	}
	var rows [][]channels.Button
	for i, o := range q.Options {
		b := channels.Button{Label: o, Data: ButtonKind + ":" + q.ID + ":" + choiceOf(i)}
		if i%perRow == 0 {
			rows = append(rows, []channels.Button{b})
			continue
		}
		rows[len(rows)-1] = append(rows[len(rows)-1], b)
	}
	return rows
}

// choiceOf is the button letter of option i; optionOf reads it back (ok
// false for a letter no option of q has).
func choiceOf(i int) string { return string(rune('a' + i)) }

func optionOf(q Question, choice string) (string, bool) {
	if len(choice) != 1 {
		return "", false
	}
	i := int(choice[0]) - 'a'
	if i < 0 || i >= len(q.Options) {
		return "", false
	}
	return q.Options[i], true
}

// timeoutText says d as people do ("1 hour", "90 minutes").
func timeoutText(d time.Duration) string {
	switch {
	case d == time.Hour:
		return "1 hour"
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.Round(time.Second).String()
}
