package bot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Teams at work. A lead splits a conversation's request into tasks and
// mail; teammates work in their team sessions for that conversation (scope
// team:<team>:<origin>), and the lead hears the outcome in the
// conversation itself. Every hand-over is a user message stored in the
// receiving session before its run is queued, so a crash in between loses
// nothing: recovery runs a session whose last message is unanswered.
//
//   - a ready task (new, or unblocked) wakes its assignee, or every
//     teammate when it has none (one of them wins the claim);
//   - mail is moved from the recipient's inbox into its session for the
//     sender's conversation, then confirmed (exactly once, across replicas);
//   - a blocker reaches the lead at once;
//   - when a conversation's last open task closes, the lead gets every
//     outcome in one "teammate:" message and answers the person once.
//
// A teammate's own replies stay in its session: it reports through the
// board and the mailbox. The lead may end a turn with SilentReply when it
// has nothing for the person yet.

// SilentReply is the reply with which an agent says nothing to the chat
// (a lead that waits for its team). It is stored but never sent.
const SilentReply = "NO_REPLY"

// isSilent reports whether a reply is SilentReply.
func isSilent(text string) bool { return strings.TrimSpace(text) == SilentReply }

// TeamMail is the part of the team mailbox the runtime uses: messages are
// fetched, stored in the recipient's session, then confirmed.
type TeamMail interface {
	Fetch(ctx context.Context, team, member string, max int) ([]tools.MailMessage, error)
	Ack(ctx context.Context, team, member string, ids ...string) error
}

// TaskOutcomes tells which closed tasks the lead has not heard about.
type TaskOutcomes interface {
	// UnreportedOutcomes returns the unreported closed tasks of origin, or
	// none while any task of origin is open.
	UnreportedOutcomes(ctx context.Context, team, origin string) ([]tools.Task, error)
	MarkReported(ctx context.Context, team string, ids []int64) error
}

// TaskLister lists a team's tasks (tools.TaskBoard's ListTasks).
type TaskLister interface {
	ListTasks(ctx context.Context, team string, f tools.TaskFilter) ([]tools.Task, error)
}

// TeamOptions wires the team runtime; with Mail and Outcomes nil teams
// still have their tools, but nobody is woken.
type TeamOptions struct {
	Mail     TeamMail
	Outcomes TaskOutcomes
	// Board, when set, lets the team pump repeat the announcement of tasks
	// left pending too long (a crash can lose one).
	Board TaskLister
	// Members returns a team's agents, lead included.
	Members func(team string) []string
}

// teamMailBatch bounds one move of an inbox into sessions.
const teamMailBatch = 50

// teamSession is the session in which agent works for origin: the lead's
// is the conversation itself, a teammate's its team session.
func (r *Router) teamSession(team, agent, origin string) string {
	if _, lead, ok := r.opts.TeamOf(agent); ok && lead == agent {
		return agentcore.SessionKey{Agent: agent, Scope: origin}.String()
	}
	return agentcore.SessionKey{Agent: agent, Scope: tools.TeamScope(team, origin)}.String()
}

// TaskEvent wakes whoever must act on a change of a team's board.
func (r *Router) TaskEvent(ctx context.Context, ev tools.TaskEvent) {
	if r.opts.TeamOf == nil || ev.Task.Origin == "" {
		return
	}
	ctx = context.WithoutCancel(ctx) // hand-overs are stored even when the run is cut short
	_, lead, ok := r.opts.TeamOf(ev.By)
	if !ok {
		return
	}
	t := ev.Task
	switch ev.Kind {
	case tools.TaskEventReady:
		for _, agent := range r.readyTargets(ev.Team, lead, ev) {
			text := fmt.Sprintf("[Task #%d on the board, from %s] %s", t.ID, t.CreatedBy, t.Subject)
			if t.Assignee != "" {
				text = fmt.Sprintf("[Task #%d for you, from %s] %s", t.ID, t.CreatedBy, t.Subject)
			}
			if t.Description != "" {
				text += "\n" + t.Description
			}
			text += "\nClaim it with team_tasks (claim), do the work, then complete it with your result. " +
				"The lead sees task results and team messages, not your replies here."
			r.handOver(ctx, r.teamSession(ev.Team, agent, t.Origin), text, fmt.Sprintf("task:%d:ready:%s", t.ID, agent), true)
		}
	case tools.TaskEventBlocker:
		text := fmt.Sprintf("teammate: %s reported a blocker on task #%d (%s): %s\nThe task failed: give it to someone else, "+
			"create another task, or tell the person what is in the way.", ev.By, t.ID, t.Subject, ev.Text)
		if r.handOver(ctx, r.teamSession(ev.Team, lead, t.Origin), text, fmt.Sprintf("task:%d:blocker", t.ID), true) {
			r.markReported(ctx, ev.Team, []int64{t.ID})
		}
		r.reportOutcomes(ctx, ev.Team, lead, t.Origin)
	case tools.TaskEventClosed:
		r.reportOutcomes(ctx, ev.Team, lead, t.Origin)
	}
}

// readyTargets are the agents a ready task wakes: its assignee, or every
// teammate but the lead and the agent that made it ready.
func (r *Router) readyTargets(team, lead string, ev tools.TaskEvent) []string {
	if ev.Task.Assignee != "" {
		return []string{ev.Task.Assignee}
	}
	var out []string
	if r.opts.Team.Members != nil {
		for _, m := range r.opts.Team.Members(team) {
			if m != lead && m != ev.By {
				out = append(out, m)
			}
		}
	}
	return out
}

// reportOutcomes gives the lead, once no task of origin is open, every
// outcome it has not heard in one message, and wakes it.
func (r *Router) reportOutcomes(ctx context.Context, team, lead, origin string) {
	if r.opts.Team.Outcomes == nil {
		return
	}
	done, err := r.opts.Team.Outcomes.UnreportedOutcomes(ctx, team, origin)
	if err != nil {
		r.log.Warn("could not read the team's task outcomes; the next closed task reports them", "team", team, "err", err)
		return
	}
	if len(done) == 0 {
		return
	}
	var b strings.Builder
	ids := make([]string, 0, len(done))
	nums := make([]int64, 0, len(done))
	for _, t := range done {
		who := cmp.Or(t.Owner, t.CreatedBy)
		switch t.Status {
		case tools.TaskCompleted:
			fmt.Fprintf(&b, "teammate: %s completed task #%d (%s): %s\n", who, t.ID, t.Subject, cmp.Or(t.Result, "(no result given)"))
		case tools.TaskCancelled:
			fmt.Fprintf(&b, "teammate: task #%d (%s) was cancelled\n", t.ID, t.Subject)
		default:
			fmt.Fprintf(&b, "teammate: task #%d (%s) failed (%s)\n", t.ID, t.Subject, who)
		}
		ids = append(ids, strconv.FormatInt(t.ID, 10))
		nums = append(nums, t.ID)
	}
	b.WriteString("Every task for this conversation is closed: answer the person now.")
	if r.handOver(ctx, r.teamSession(team, lead, origin), b.String(), "tasks-done:"+strings.Join(ids, ","), true) {
		r.markReported(ctx, team, nums)
	}
}

func (r *Router) markReported(ctx context.Context, team string, ids []int64) {
	if err := r.opts.Team.Outcomes.MarkReported(ctx, team, ids); err != nil {
		// The lead heard them; the worst case is hearing them again.
		r.log.Warn("could not mark task outcomes reported", "team", team, "err", err)
	}
}

// MailArrived moves member's unread mail into its sessions — one per
// conversation the senders worked for — and wakes them. A message is
// confirmed only once it is stored, so a crash in between delivers it
// again (into the same session, where its id makes it a duplicate).
func (r *Router) MailArrived(ctx context.Context, team, member string) {
	if err := r.moveMail(ctx, team, member); err != nil {
		r.log.Warn("could not read a team inbox; it is read again within seconds", "team", team, "member", member, "err", err)
	}
}

// moveMail is MailArrived; it returns a failure to read the inbox.
func (r *Router) moveMail(ctx context.Context, team, member string) error {
	if r.opts.Team.Mail == nil || r.opts.TeamOf == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	for range 20 { // a bounded number of batches; the pump takes the rest
		msgs, err := r.opts.Team.Mail.Fetch(ctx, team, member, teamMailBatch)
		if err != nil {
			return err
		}
		if len(msgs) == 0 {
			return nil
		}
		var stored []string
		var sessions []string
		for _, m := range msgs {
			origin := cmp.Or(m.Origin, "unknown")
			session := r.teamSession(team, member, origin)
			text := fmt.Sprintf("[Team message from %s] %s", m.From, m.Text)
			if !r.handOver(ctx, session, text, "mail:"+m.ID, false) {
				continue // left unconfirmed: delivered again
			}
			stored = append(stored, m.ID)
			if !slices.Contains(sessions, session) {
				sessions = append(sessions, session)
			}
		}
		if err := r.opts.Team.Mail.Ack(ctx, team, member, stored...); err != nil {
			r.log.Warn("could not confirm team mail; it is delivered again (and recognised)", "member", member, "err", err)
		}
		for _, s := range sessions {
			r.wake(ctx, s)
		}
		if len(msgs) < teamMailBatch {
			return nil
		}
	}
	return nil
}

// RunTeamMail moves every member's mail into its sessions now and every
// interval: mail whose move a crash interrupted, or that arrived while
// Redis was unreachable, is delivered within about interval plus the 30 s
// after which an unconfirmed message is handed to another reader.
func (r *Router) RunTeamMail(ctx context.Context, teams []string, interval time.Duration) {
	if r.opts.Team.Mail == nil || r.opts.Team.Members == nil || len(teams) == 0 {
		return
	}
	repeat(ctx, interval, r.log, "reading the team inboxes", func(ctx context.Context) error {
		var err error
		for _, team := range teams {
			for _, m := range r.opts.Team.Members(team) {
				if e := r.moveMail(ctx, team, m); e != nil {
					err = e
				}
			}
			if _, e := r.reannounce(ctx, team); e != nil {
				err = e
			}
		}
		return err
	})
}

// handOver stores text as a user message in session (idempotent by
// externalID) and, when wake is set, queues a run of the session. It
// reports whether the message is stored.
func (r *Router) handOver(ctx context.Context, session, text, externalID string, wake bool) bool {
	msg := agentcore.Message{Role: agentcore.RoleUser, Content: text, ExternalID: externalID}
	if _, err := r.opts.History.Append(ctx, session, msg); err != nil && !errors.Is(err, agentcore.ErrDuplicate) {
		r.log.Error("team hand-over not stored", "session", session, "external_id", externalID, "err", err)
		return false
	}
	if wake {
		r.wake(ctx, session)
	}
	return true
}

// wake queues a run of a session that has new work in it: a chat session,
// or a team or subagent session, which runs for its conversation's chat.
func (r *Router) wake(ctx context.Context, session string) {
	to, err := channels.ParseAddress(tools.OriginOf(session))
	if err != nil || r.opts.Channels[to.Platform] == nil {
		r.log.Warn("work for a conversation not served here; it stays in the session", "session", session)
		return
	}
	if !r.lanes.enqueue(laneJob{Session: session, To: to}) {
		r.log.Info("not running now (shutting down); recovery will", "session", session)
	}
}

// background reports whether session is a team or subagent session: its
// runs show no progress in the chat and its replies are not sent there.
func background(session string) bool {
	scope := tools.ScopeOf(session)
	_, _, team := tools.ParseTeamScope(scope)
	_, _, sub := tools.ParseSubScope(scope)
	return team || sub
}

// teamFailed tells the lead that a teammate's run failed.
func (r *Router) teamFailed(ctx context.Context, session, reason, id string) {
	team, origin, ok := tools.ParseTeamScope(tools.ScopeOf(session))
	if !ok || r.opts.TeamOf == nil {
		return
	}
	agent := tools.AgentOf(session)
	_, lead, ok := r.opts.TeamOf(agent)
	if !ok {
		return
	}
	text := fmt.Sprintf("teammate: %s could not go on: %s (error id %s).", agent, reason, id)
	r.handOver(context.WithoutCancel(ctx), r.teamSession(team, lead, origin), text, "failed:"+session+":"+id, true)
}
