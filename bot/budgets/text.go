package budgets

import (
	"fmt"
	"time"
)

// resetFormat shows when a period ends.
const resetFormat = "2006-01-02 15:04 UTC"

// refusalText tells the person whose call was refused which budget is
// used up, by how much, when it resets and what the admins said.
func refusalText(b Budget, used, limit int64, end time.Time, status string, admins bool) string {
	text := fmt.Sprintf("⛔ Budget used up: %s is spent (%s used of %s this %s). It resets at %s.",
		b.Describe(), b.Amount(used), b.Amount(limit), b.Per, end.UTC().Format(resetFormat))
	switch {
	case status == StatusAllowed:
		return text + " An admin already allowed one more " + b.Per + "'s limit; that is used up too."
	case status == StatusKept:
		return text + " An admin kept the limit."
	case admins:
		return text + " I've asked an admin whether to allow more."
	}
	return text
}

// askText asks the admins whether to raise b for subject this period.
func askText(b Budget, subject string, used int64, end time.Time) string {
	return fmt.Sprintf("💸 *Budget used up*\n%s: %s used of %s (%s). It resets at %s.\n"+
		"*Allow once more* gives one more %s's limit, this %s only.",
		subjectText(b.Scope, subject), b.Amount(used), b.Describe(), b.ID(), end.UTC().Format(resetFormat), b.Per, b.Per)
}

// decidedText is the admins' message once an admin decided.
func decidedText(o Override, b Budget, known bool) string {
	what := "budget " + o.Budget
	if known {
		what = b.Describe()
	}
	subject := "`" + o.Subject + "`"
	if known {
		subject = subjectText(b.Scope, o.Subject)
	}
	if o.Status == StatusAllowed {
		return fmt.Sprintf("✅ Allowed once more by %s: %s may use %s again until %s.", o.DecidedBy, subject, what, o.PeriodEnd.Format(resetFormat))
	}
	return fmt.Sprintf("⛔ Limit kept by %s: %s stays at %s until %s.", o.DecidedBy, subject, what, o.PeriodEnd.Format(resetFormat))
}

// decisionText says what was decided, for the presser.
func decisionText(o Override) string {
	if o.Status == StatusAllowed {
		return "allowed once more by " + o.DecidedBy
	}
	if o.Status == StatusKept {
		return "limit kept by " + o.DecidedBy
	}
	return o.Status
}

// allowedNotice tells the refused chat an admin allowed more.
func allowedNotice(o Override, b Budget) string {
	return fmt.Sprintf("✅ An admin allowed one more %s's limit of %s (until %s). Send your message again to go on.",
		b.Per, b.Describe(), o.PeriodEnd.Format(resetFormat))
}

// subjectText names whose spending a budget of scope caps.
func subjectText(scope, subject string) string {
	switch scope {
	case "user":
		return "user `" + subject + "`"
	case "chat":
		return "chat `" + subject + "`"
	case "agent":
		return "agent `" + subject + "`"
	case "job":
		return "job `" + subject + "`"
	}
	return "everyone together"
}
