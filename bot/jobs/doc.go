// Package jobs is the scheduled-jobs feature: agent prompts run on a cron
// schedule, their replies posted to a chat.
//
// It owns the Job and JobRun types and the Store that keeps them
// (storage/postgres implements it), the Scheduler that runs each slot of
// each enabled job once across replicas, the /jobs chat command
// (Commands), the store behind the agent's cron tool (CronStore; the tool
// itself is tools.Cron) and the list of GET /api/v1/jobs (AdminList).
//
// It registers with the pipeline the way every feature under bot/ does
// (see package bot): cmd/switchboard builds a Scheduler on the Router's
// agents (bot.Agents), passes Commands(scheduler.WatchJobs(store), log) to
// bot.Router.Register, hands NewCronStore(store) to the cron tool and runs
// Scheduler.Run. A job's run stores its prompt in the job's session and
// queues the reply to the bot.Outbox keyed by the reply's session seq, so
// a run taken over from a replica that died never delivers twice.
//
// Imports flow one way: jobs imports bot, agentcore, channels and tools;
// bot never imports jobs.
package jobs
