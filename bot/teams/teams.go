package teams

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// Inbox is the part of the team mailbox the runtime uses: messages are
// fetched, stored in the recipient's session, then confirmed.
type Inbox interface {
	Fetch(ctx context.Context, team, member string, max int) ([]MailMessage, error)
	Ack(ctx context.Context, team, member string, ids ...string) error
}

// TaskOutcomes tells which closed tasks the lead has not heard about.
type TaskOutcomes interface {
	// UnreportedOutcomes returns the unreported closed tasks of origin, or
	// none while any task of origin is open.
	UnreportedOutcomes(ctx context.Context, team, origin string) ([]Task, error)
	MarkReported(ctx context.Context, team string, ids []int64) error
}

// TaskLister lists a team's tasks (TaskBoard's ListTasks).
type TaskLister interface {
	ListTasks(ctx context.Context, team string, f TaskFilter) ([]Task, error)
}

// Pipeline is what teams need of the pipeline (the Router): handing work
// into a session, waking a session, and the agent answering in a chat.
type Pipeline interface {
	HandOver(ctx context.Context, session, text, externalID string, wake bool) bool
	Wake(ctx context.Context, session string)
	AgentAt(ctx context.Context, addr channels.Address) string
}

// Options wires the team runtime; with Mail and Outcomes nil teams still
// have their tools, but nobody is woken. With TeamOf nil there are no
// teams.
type Options struct {
	Mail     Inbox
	Outcomes TaskOutcomes
	// Board serves /tasks and lets the team pump repeat the announcement
	// of tasks left pending too long (a crash can lose one).
	Board TaskLister
	// TeamOf returns an agent's team and its lead.
	TeamOf func(agent string) (team, lead string, ok bool)
	// Members returns a team's agents, lead included.
	Members func(team string) []string
	// ReannounceAfter is how long a task may stay pending and unchanged
	// before its announcement is repeated; zero: reannounceAfter.
	ReannounceAfter time.Duration
	Logger          *slog.Logger
}

// Service is the team runtime: it wakes whoever must act on a change of
// the board or a team message, and tells the lead what its team did.
type Service struct {
	o   Options
	p   Pipeline
	log *slog.Logger
	// reannounced holds the tasks whose announcement this process has
	// repeated (reannounce.go), "team#id".
	reannounced sync.Map
}

var _ bot.SessionOwner = (*Service)(nil)

// New returns a Service that hands work to sessions through p (the
// Router). Pass it to Router.RunInBackground.
func New(p Pipeline, o Options) *Service {
	if o.ReannounceAfter <= 0 {
		o.ReannounceAfter = reannounceAfter
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Service{o: o, p: p, log: o.Logger}
}

// teamMailBatch bounds one move of an inbox into sessions.
const teamMailBatch = 50

// teamSession is the session in which agent works for origin: the lead's
// is the conversation itself, a teammate's its team session.
func (s *Service) teamSession(team, agent, origin string) string {
	if _, lead, ok := s.o.TeamOf(agent); ok && lead == agent {
		return agentcore.SessionKey{Agent: agent, Scope: origin}.String()
	}
	return agentcore.SessionKey{Agent: agent, Scope: tools.TeamScope(team, origin)}.String()
}

// TaskEvent wakes whoever must act on a change of a team's board.
func (s *Service) TaskEvent(ctx context.Context, ev TaskEvent) {
	if s.o.TeamOf == nil || ev.Task.Origin == "" {
		return
	}
	ctx = context.WithoutCancel(ctx) // hand-overs are stored even when the run is cut short
	_, lead, ok := s.o.TeamOf(ev.By)
	if !ok {
		return
	}
	t := ev.Task
	switch ev.Kind {
	case TaskEventReady:
		for _, agent := range s.readyTargets(ev.Team, lead, ev) {
			text := fmt.Sprintf("[Task #%d on the board, from %s] %s", t.ID, t.CreatedBy, t.Subject)
			if t.Assignee != "" {
				text = fmt.Sprintf("[Task #%d for you, from %s] %s", t.ID, t.CreatedBy, t.Subject)
			}
			if t.Description != "" {
				text += "\n" + t.Description
			}
			text += "\nClaim it with team_tasks (claim), do the work, then complete it with your result. " +
				"The lead sees task results and team messages, not your replies here."
			s.p.HandOver(ctx, s.teamSession(ev.Team, agent, t.Origin), text, fmt.Sprintf("task:%d:ready:%s", t.ID, agent), true)
		}
	case TaskEventBlocker:
		text := fmt.Sprintf("teammate: %s reported a blocker on task #%d (%s): %s\nThe task failed: give it to someone else, "+
			"create another task, or tell the person what is in the way.", ev.By, t.ID, t.Subject, ev.Text)
		if s.p.HandOver(ctx, s.teamSession(ev.Team, lead, t.Origin), text, fmt.Sprintf("task:%d:blocker", t.ID), true) {
			s.markReported(ctx, ev.Team, []int64{t.ID})
		}
		s.reportOutcomes(ctx, ev.Team, lead, t.Origin)
	case TaskEventClosed:
		s.reportOutcomes(ctx, ev.Team, lead, t.Origin)
	}
}

// readyTargets are the agents a ready task wakes: its assignee, or every
// teammate but the lead and the agent that made it ready.
func (s *Service) readyTargets(team, lead string, ev TaskEvent) []string {
	if ev.Task.Assignee != "" {
		return []string{ev.Task.Assignee}
	}
	var out []string
	if s.o.Members != nil {
		for _, m := range s.o.Members(team) {
			if m != lead && m != ev.By {
				out = append(out, m)
			}
		}
	}
	return out
}

// reportOutcomes gives the lead, once no task of origin is open, every
// outcome it has not heard in one message, and wakes it.
func (s *Service) reportOutcomes(ctx context.Context, team, lead, origin string) {
	if s.o.Outcomes == nil {
		return
	}
	done, err := s.o.Outcomes.UnreportedOutcomes(ctx, team, origin)
	if err != nil {
		s.log.Warn("could not read the team's task outcomes; the next closed task reports them", "team", team, "err", err)
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
		case TaskCompleted:
			fmt.Fprintf(&b, "teammate: %s completed task #%d (%s): %s\n", who, t.ID, t.Subject, cmp.Or(t.Result, "(no result given)"))
		case TaskCancelled:
			fmt.Fprintf(&b, "teammate: task #%d (%s) was cancelled\n", t.ID, t.Subject)
		default:
			fmt.Fprintf(&b, "teammate: task #%d (%s) failed (%s)\n", t.ID, t.Subject, who)
		}
		ids = append(ids, strconv.FormatInt(t.ID, 10))
		nums = append(nums, t.ID)
	}
	b.WriteString("Every task for this conversation is closed: answer the person now.")
	if s.p.HandOver(ctx, s.teamSession(team, lead, origin), b.String(), "tasks-done:"+strings.Join(ids, ","), true) {
		s.markReported(ctx, team, nums)
	}
}

func (s *Service) markReported(ctx context.Context, team string, ids []int64) {
	if err := s.o.Outcomes.MarkReported(ctx, team, ids); err != nil {
		// The lead heard them; the worst case is hearing them again.
		s.log.Warn("could not mark task outcomes reported", "team", team, "err", err)
	}
}

// MailArrived moves member's unread mail into its sessions — one per
// conversation the senders worked for — and wakes them. A message is
// confirmed only once it is stored, so a crash in between delivers it
// again (into the same session, where its id makes it a duplicate).
func (s *Service) MailArrived(ctx context.Context, team, member string) {
	if err := s.moveMail(ctx, team, member); err != nil {
		s.log.Warn("could not read a team inbox; it is read again within seconds", "team", team, "member", member, "err", err)
	}
}

// moveMail is MailArrived; it returns a failure to read the inbox.
func (s *Service) moveMail(ctx context.Context, team, member string) error {
	if s.o.Mail == nil || s.o.TeamOf == nil {
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	for range 20 { // a bounded number of batches; the pump takes the rest
		msgs, err := s.o.Mail.Fetch(ctx, team, member, teamMailBatch)
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
			session := s.teamSession(team, member, origin)
			text := fmt.Sprintf("[Team message from %s] %s", m.From, m.Text)
			if !s.p.HandOver(ctx, session, text, "mail:"+m.ID, false) {
				continue // left unconfirmed: delivered again
			}
			stored = append(stored, m.ID)
			if !slices.Contains(sessions, session) {
				sessions = append(sessions, session)
			}
		}
		if err := s.o.Mail.Ack(ctx, team, member, stored...); err != nil {
			s.log.Warn("could not confirm team mail; it is delivered again (and recognised)", "member", member, "err", err)
		}
		for _, session := range sessions {
			s.p.Wake(ctx, session)
		}
		if len(msgs) < teamMailBatch {
			return nil
		}
	}
	return nil
}

// RunMail moves every member's mail into its sessions now and every
// interval: mail whose move a crash interrupted, or that arrived while
// Redis was unreachable, is delivered within about interval plus the 30 s
// after which an unconfirmed message is handed to another reader. It also
// repeats the announcements of tasks left pending (Reannounce).
func (s *Service) RunMail(ctx context.Context, teams []string, interval time.Duration) {
	if s.o.Mail == nil || s.o.Members == nil || len(teams) == 0 {
		return
	}
	pass := func(ctx context.Context) error {
		var err error
		for _, team := range teams {
			for _, m := range s.o.Members(team) {
				if e := s.moveMail(ctx, team, m); e != nil {
					err = e
				}
			}
			if _, e := s.Reannounce(ctx, team); e != nil {
				err = e
			}
		}
		return err
	}
	bot.RepeatPaced(ctx, s.log, "reading the team inboxes", pass,
		func() time.Duration { return interval }, nil)
}

// Owns implements bot.SessionOwner: the team sessions.
func (s *Service) Owns(session string) bool {
	_, _, ok := tools.ParseTeamScope(tools.ScopeOf(session))
	return ok
}

// Start implements bot.SessionOwner: a teammate's run needs nothing
// prepared.
func (s *Service) Start(ctx context.Context, _ string, _ *agentcore.RunInput) (context.Context, func()) {
	return ctx, func() {}
}

// Finished implements bot.SessionOwner: a teammate reports its work
// through the board and the mailbox, so only a failed run is told (to the
// lead).
func (s *Service) Finished(ctx context.Context, session string, out bot.Outcome) {
	if out.End == bot.RunFailed {
		s.teamFailed(ctx, session, out.Reason, out.ErrorID)
	}
}

// teamFailed tells the lead that a teammate's run failed.
func (s *Service) teamFailed(ctx context.Context, session, reason, id string) {
	team, origin, ok := tools.ParseTeamScope(tools.ScopeOf(session))
	if !ok || s.o.TeamOf == nil {
		return
	}
	agent := tools.AgentOf(session)
	_, lead, ok := s.o.TeamOf(agent)
	if !ok {
		return
	}
	text := fmt.Sprintf("teammate: %s could not go on: %s (error id %s).", agent, reason, id)
	s.p.HandOver(context.WithoutCancel(ctx), s.teamSession(team, lead, origin), text, "failed:"+session+":"+id, true)
}
