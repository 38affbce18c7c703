// Package teams runs agents as teams: the task board's events and the
// mailbox wake teammates in their team sessions, and the lead hears the
// outcomes. The Service owns the team sessions' runs (bot.SessionOwner)
// and serves /tasks; the team tools (TaskTool, MessageTool)
// report to it.
//
// A lead splits a conversation's request into tasks and
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
// board and the mailbox. The lead may end a turn with bot.SilentReply when it
// has nothing for the person yet.
package teams
