// Package usage records what every model call used — input, output,
// cache-read and cache-write tokens, and their cost at llm.prices — per
// identity, chat, agent, model and scheduled job, in PostgreSQL (the
// llm_usage table), and shows it: the /usage chat command, the sums the
// admin API serves (GET /api/v1/usage) and the
// switchboard_llm_tokens_total and switchboard_llm_cost_dollars_total
// metrics.
//
// The Recorder is an agentcore.Meter that admits every call (budgets are
// another Meter's job) and records each call's usage after it answered,
// durably even when the run is stopped right after the call. Figures a
// provider reports are not trusted: negative counts are recorded as 0 and
// counts over MaxTokensPerCall are capped, so one bad response cannot
// overflow or poison the totals.
package usage
