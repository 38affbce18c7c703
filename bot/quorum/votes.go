package quorum

import (
	"fmt"
	"strings"
	"time"
)

// ChoiceDenied is the choice of a vote that denies; every other choice
// allows (in the allowing way of its kind of request).
const ChoiceDenied = "denied"

// Vote is one person's choice on a request; a person votes once.
type Vote struct {
	// Person is the approvals.people name of whoever pressed, or their
	// identity when it maps to nobody (People.PersonOf).
	Person   string
	Identity string // the account that pressed (platform:user_id)
	Choice   string // ChoiceDenied, or the kind's allowing choice
	At       time.Time
}

// Outcome is what a vote did.
type Outcome int

// The outcomes of recording a vote.
const (
	// Counted: recorded; the request still waits for more votes.
	Counted Outcome = iota
	// Decided: recorded, and it decided the request (a deny, or the
	// quorum's last allow) in the same transaction.
	Decided
	// Repeated: this person voted before; nothing changed.
	Repeated
	// Closed: the request was decided before; nothing changed.
	Closed
	// Late: its time is up; nothing was recorded and the caller expires it.
	Late
)

// Allows counts the allowing votes.
func Allows(votes []Vote) int {
	n := 0
	for _, v := range votes {
		if v.Choice != ChoiceDenied {
			n++
		}
	}
	return n
}

// Line shows a quorum request's votes so far ("1 of 2 — ✅
// telegram:1001") on a line of its own; "" for a one-person request,
// whose outcome names who decided.
func Line(votes []Vote, quorum int) string {
	if quorum <= 1 {
		return ""
	}
	if len(votes) == 0 {
		return fmt.Sprintf("\n0 of %d — no votes yet", quorum)
	}
	shown := make([]string, 0, len(votes))
	for _, v := range votes {
		icon := "✅"
		if v.Choice == ChoiceDenied {
			icon = "⛔"
		}
		shown = append(shown, icon+" "+v.Identity)
	}
	return fmt.Sprintf("\n%d of %d — %s", Allows(votes), quorum, strings.Join(shown, ", "))
}

// Needs says what a quorum request needs, on a line of its own ("" for a
// one-person request): verb is the kind's allowing word ("allow",
// "approve"), refusal how one refusing press ends it ("one Deny denies").
func Needs(quorum int, selfApprove bool, verb, refusal string) string {
	if quorum <= 1 {
		return ""
	}
	s := fmt.Sprintf("\nNeeds %d people to %s; %s.", quorum, verb, refusal)
	if !selfApprove {
		s += " The requester's own press does not count."
	}
	return s
}
