package approvals

import (
	"fmt"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/quorum"
	"github.com/switchboard-chat/switchboard/tools"
)

// approvalText is the card the approvers are asked with.
func approvalText(a Approval) string {
	var b strings.Builder
	w := wordsFor(a.Verb)
	if a.Verb != "" {
		fmt.Fprintf(&b, "🔐 *Approval needed* — %s wants to %s a %s (`%s`)", whoAsks(a.Agent, a.Session), w.infinitive, w.thing, a.Tool)
	} else {
		fmt.Fprintf(&b, "🔐 *Approval needed* — %s wants to run `%s`", whoAsks(a.Agent, a.Session), a.Tool)
	}
	fmt.Fprintf(&b, "\nAsked by %s in %s", a.Requester, a.Chat.String())
	if a.Cwd != "" {
		fmt.Fprintf(&b, ", in folder %s", a.Cwd)
	}
	b.WriteString(":\n" + bot.CommandBlock(a.Command))
	b.WriteString(warningLines(a))
	if len(a.Warnings) > 0 && a.Verb == "" {
		b.WriteString("\n\"Always allow\" is not offered for a command flagged dangerous.")
	}
	b.WriteString(quorum.Needs(a.Quorum, a.SelfApprove, w.infinitive, w.refusal))
	b.WriteString(votesLine(a))
	fmt.Fprintf(&b, "\nExpires at %s UTC if nobody decides.", a.ExpiresAt.UTC().Format("15:04:05"))
	return b.String()
}

// outcomeText is what a decided approval's message in role shows.
func outcomeText(a Approval, role string) string {
	text := statusIcon(a.Status) + " " + statusText(a) + "\n" + bot.CommandBlock(a.Command) + warningLines(a) + votesLine(a)
	if role == "requester" && a.Status == StatusExpired {
		text += "\nAsk again if it is still needed."
	}
	return text
}

// requesterText is the note in the requester's chat while a waits.
func requesterText(a Approval) string {
	what := "action"
	if a.Tool == "exec" {
		what = "command"
	}
	w := wordsFor(a.Verb)
	if w.thing != "" {
		what = w.thing
	}
	who := "an approver"
	if a.Quorum > 1 {
		who = fmt.Sprintf("%d approvers", a.Quorum)
	}
	return "⏳ Waiting for " + who + " to " + w.infinitive + " this " + what + ":\n" + bot.CommandBlock(a.Command) + votesLine(a) +
		"\nI'll go on when they decide; /cancel withdraws it."
}

// escalationText is the card sent to escalate_to when a is still
// undecided at its escalation time.
func escalationText(a Approval) string {
	return fmt.Sprintf("⏫ *Escalated*: still undecided %s after it was asked; you may decide it too.\n",
		a.EscalateAt.Sub(a.CreatedAt).Round(time.Second)) + approvalText(a)
}

// votesLine shows a quorum request's votes so far on a line of its own
// (quorum.Line).
func votesLine(a Approval) string { return quorum.Line(a.Votes, a.Quorum) }

// votesSummary is votesLine for one-line lists (/approvals).
func votesSummary(a Approval) string { return strings.TrimPrefix(votesLine(a), "\n") }

// whoAsks names the agent behind session: the agent itself, a teammate
// working for a team, or a subagent of which agent.
func whoAsks(agent, session string) string {
	scope := tools.ScopeOf(session)
	if _, parent, ok := tools.ParseSubScope(scope); ok {
		return fmt.Sprintf("a subagent of %s (session %s)", tools.AgentOf(parent), parent)
	}
	if team, _, ok := tools.ParseTeamScope(scope); ok {
		return fmt.Sprintf("agent %s, working for team %s,", agent, team)
	}
	return "agent " + agent
}

// warningLines renders why the exec guard flagged a's command as
// dangerous, one line each, or "".
func warningLines(a Approval) string {
	var b strings.Builder
	for _, w := range a.Warnings {
		b.WriteString("\n⚠️ Dangerous: " + w)
	}
	return b.String()
}

// statusText says how a stands, for the edited messages and presses.
func statusText(a Approval) string {
	switch a.Status {
	case StatusPending:
		return "waiting for a decision"
	case StatusExpired:
		return "Expired: nobody decided in time, so it did not run."
	case StatusCancelled:
		return "Withdrawn by " + a.DecidedBy + ", so it did not run."
	}
	return fmt.Sprintf("%s by %s", outcomeWord(a), a.DecidedBy)
}

// outcomeWord names a decided approval's outcome: "Allowed once",
// "Denied", or its verb's ("Published", "Rejected").
func outcomeWord(a Approval) string {
	w := wordsFor(a.Verb)
	switch {
	case w.allowed != "" && (a.Status == StatusAllowedOnce || a.Status == StatusAllowedAlways):
		return w.allowed
	case w.denied != "" && a.Status == StatusDenied:
		return w.denied
	}
	return capitalize(decisionOf(a.Status).String())
}

// statusIcon marks an outcome in the edited messages.
func statusIcon(status string) string {
	switch status {
	case StatusAllowedOnce, StatusAllowedAlways:
		return "✅"
	case StatusExpired:
		return "⌛"
	case StatusCancelled:
		return "↩️"
	}
	return "⛔"
}

// decisionOf is the tools.Decision a status means for the call.
func decisionOf(status string) tools.Decision {
	switch status {
	case StatusAllowedOnce:
		return tools.AllowedOnce
	case StatusAllowedAlways:
		return tools.AllowedAlways
	case StatusExpired:
		return tools.Expired
	case StatusCancelled:
		return tools.Cancelled
	}
	return tools.Denied
}

// capitalize upper-cases the first letter of s.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}
