// Package bot is the daemon's pipeline: inbound (dedupe → access → rate
// limit → chat commands → per-session lane → agent run) and the outbox
// dispatcher that delivers replies. It defines the storage interfaces it
// needs; storage/postgres and storage/redis implement them.
//
// # Features
//
// A feature (bot/approvals, bot/access, bot/jobs, bot/handoff, bot/teams,
// bot/subagents, bot/admin, bot/customtools, bot/contextfiles,
// bot/messaging) is a package under bot/ that owns its types, its store
// interface, its chat commands and its tools. It imports bot; bot never
// imports a feature. It hooks into the pipeline in these ways:
//
//   - Chat commands: the feature returns []Command (name, one line of help,
//     a Run func) and the daemon passes them to Router.Register after
//     NewRouter and before the first Handle. A command's Run gets a Host,
//     the narrow part of the Router a command may use (IsAdmin), not the
//     Router itself. /help lists the built-in commands, then the
//     registered ones in the order they were registered; a name taken
//     already is refused.
//   - Decisions by people: a feature that asks people to decide with
//     buttons (bot/approvals, bot/access) registers the button kind it owns
//     with HandlePresses and, for access.mode=request, what happens to an
//     unknown person with HandleUnknown; it posts and edits its decision
//     messages through the Router's AskDecision and EditDecisions
//     (feature_chat.go), declared as an interface in the feature.
//   - Runs and replies: a feature that runs an agent on its own schedule
//     finds the agent through Agents (the Router: the same agents chats
//     get), and stores the prompt and queues the reply through the
//     agentcore.History and Outbox the Router uses; a reply queued with its
//     session seq is delivered once.
//   - Background sessions: a feature whose agents work for a conversation
//     in sessions of their own (a teammate, a subagent) hands work in with
//     Router.HandOver and Wake, and owns those sessions through
//     Router.RunInBackground: the run calls its SessionOwner to prepare
//     each run and tells it how the run ended (see background.go).
//   - Background loops and metrics: RepeatPaced, Sleep, Pruning,
//     RetryDelay, Liveness, NewCounterVec and NewObserver are the
//     pipeline's own building blocks, exported for features so they
//     behave alike. bot/leader and bot/progress are building blocks too:
//     the platform pollers' leader election and the run's progress note.
//
// cmd/switchboard constructs each feature with its store and registers it:
// the wiring of a feature is in one file there (cmd/switchboard/jobs.go,
// teams.go, subagents.go, decisions.go, admin_api.go), and commands.go
// registers the features in the order /help lists their commands.
package bot
