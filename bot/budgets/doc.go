// Package budgets caps what the agents spend: the budgets: of the
// configuration (per user, chat, agent, job or in all; tokens, or dollars
// with llm.prices; per day, week or month, UTC) are checked before every
// model call. Its Guard is an agentcore.Meter: a call over budget is not
// made, the person is told which budget is used up and when it resets,
// and the admins are asked once per budget, subject and period whether to
// allow one more period's limit (buttons, decided on any replica). The
// running totals live in Redis, shared by the replicas, and are rebuilt
// from the usage records in PostgreSQL when Redis lost them; with Redis
// unreachable the Guard sums PostgreSQL directly, so a budget always
// holds.
package budgets
