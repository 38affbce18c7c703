package usage

import (
	"context"
	"fmt"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// topN is how many of each kind /usage lists for admins.
const topN = 5

// unavailable is the answer when the records cannot be read.
const unavailable = "Could not read usage right now (storage unavailable). Try again in a minute."

// Commands returns /usage, answered from r's records.
func Commands(r *Recorder) []bot.Command {
	return []bot.Command{{
		Name: "usage",
		Help: "your and this chat's tokens, cost and cache share today, this week and month; admins: the top spenders",
		Run:  r.usageCommand,
	}}
}

// usageCommand answers /usage: the asker's usage and the chat's, today
// in full and the week and month in brief; for admins, today's top
// identities, agents, models and jobs.
func (r *Recorder) usageCommand(ctx context.Context, host bot.Host, in channels.Inbound, _ string) string {
	who, chat := in.Identity(), in.Platform+":"+in.ChatID
	var b strings.Builder
	for _, s := range []struct {
		title string
		q     Query
	}{{"You", Query{Identity: who}}, {"This chat", Query{Chat: chat}}} {
		line, err := r.periodLines(ctx, s.title, s.q)
		if err != nil {
			r.log.Error("/usage could not sum usage", "identity", who, "chat", chat, "err", err)
			return unavailable
		}
		b.WriteString(line)
	}
	if host.IsAdmin(who) {
		top, err := r.topLines(ctx)
		if err != nil {
			r.log.Error("/usage could not sum the top usage", "err", err)
			return unavailable
		}
		b.WriteString(top)
	}
	return strings.TrimSpace(b.String())
}

// periodLines sums q today, this week and this month: "title, today
// (UTC): …" in full, then "title, this week: … · this month: …".
func (r *Recorder) periodLines(ctx context.Context, title string, q Query) (string, error) {
	ps := periods(r.o.Now())
	var b strings.Builder
	for i, p := range ps {
		q.Since = p.Start
		t, err := r.total(ctx, q)
		if err != nil {
			return "", err
		}
		switch i {
		case 0:
			fmt.Fprintf(&b, "%s, %s (UTC): %s\n", title, p.Name, describe(t))
		case 1:
			fmt.Fprintf(&b, "%s, %s: %s", title, p.Name, brief(t))
		default:
			fmt.Fprintf(&b, " · %s: %s", p.Name, brief(t))
		}
	}
	return b.String() + "\n", nil
}

// topLines lists today's largest identities, agents, models and jobs.
func (r *Recorder) topLines(ctx context.Context) (string, error) {
	today := periods(r.o.Now())[0].Start
	var b strings.Builder
	b.WriteString("\nTop today:\n")
	for _, g := range []struct{ by, title string }{
		{ByIdentity, "people"}, {ByAgent, "agents"}, {ByModel, "models"}, {ByJob, "jobs"},
	} {
		rows, err := r.o.Store.SumUsage(ctx, Query{GroupBy: g.by, Since: today, Limit: topN + 1})
		if err != nil {
			return "", fmt.Errorf("top %s: %w", g.by, err)
		}
		var items []string
		for _, t := range rows {
			if t.Key == "" {
				continue // runs without an identity, or not a job's
			}
			if len(items) == topN {
				break
			}
			items = append(items, t.Key+" "+brief(t))
		}
		if len(items) == 0 {
			items = []string{"none"}
		}
		fmt.Fprintf(&b, "- %s: %s\n", g.title, strings.Join(items, "; "))
	}
	return b.String(), nil
}

// total is q's usage summed into one Total.
func (r *Recorder) total(ctx context.Context, q Query) (Total, error) {
	q.GroupBy = ""
	rows, err := r.o.Store.SumUsage(ctx, q)
	if err != nil || len(rows) == 0 {
		return Total{}, err
	}
	return rows[0], nil
}
