package main

import (
	"context"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/bot/askuser"
	"github.com/switchboard-chat/switchboard/channels"
	"github.com/switchboard-chat/switchboard/tools"
)

// askUserTool makes the question service and returns its ask_user tool.
// The service exists before the router (the agents' tools need it, and
// the router needs the agents); wireAskUser joins the two.
func (d *daemon) askUserTool() tools.Tool {
	d.questions = askuser.New(askuser.Options{Store: d.st.db, Messages: d.st.db, Logger: d.log})
	return d.questions.Tool()
}

// wireAskUser hooks the questions into the router: the answer buttons and
// the typed answers.
func (d *daemon) wireAskUser() error {
	d.questions.Attach(d.router)
	d.router.TakeAnswers(d.questions.TakeAnswer)
	return d.router.HandlePresses(askuser.ButtonKind, d.questions.Decide)
}

// withQuestionCancel makes /cancel among cmds withdraw the sender's
// waiting question first (an admin's: any in the chat); with none, it
// withdraws approval requests as before.
func (d *daemon) withQuestionCancel(cmds []bot.Command) []bot.Command {
	for i, c := range cmds {
		if c.Name != "cancel" {
			continue
		}
		approvalsCancel := c.Run
		cmds[i].Help = "withdraw your request that waits for an approver, or the question that waits for your answer"
		cmds[i].Run = func(ctx context.Context, host bot.Host, in channels.Inbound, args string) string {
			if text, handled := d.questions.Cancel(ctx, in, host.IsAdmin(in.Identity())); handled {
				return text
			}
			return approvalsCancel(ctx, host, in, args)
		}
	}
	return cmds
}
