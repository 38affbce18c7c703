package config

import "time"

// ApprovalRule says who must decide the approvals it matches and how
// many of them: the first rule whose tools, classes and agents all match
// (an empty list matches anything) applies; no match → one approver of
// approvals.approvers, as without rules.
type ApprovalRule struct {
	// Tools are tool names or group:NAME.
	Tools []string `mapstructure:"tools"`
	// Classes are side-effect classes (read_only, mutating, …).
	Classes []string `mapstructure:"classes"`
	// Agents are agent names.
	Agents []string `mapstructure:"agents"`
	// Quorum is how many distinct people must allow (default 1).
	Quorum int `mapstructure:"quorum"`
	// Approvers are identities or group:NAME; empty means
	// approvals.approvers.
	Approvers []string `mapstructure:"approvers"`
	// SelfApprove lets the requester's own press count.
	SelfApprove bool `mapstructure:"self_approve"`
	// EscalateAfter: a request still undecided this long after it was
	// asked is also sent to EscalateTo, who may then decide too.
	EscalateAfter time.Duration `mapstructure:"escalate_after"`
	// EscalateTo are identities or group:NAME.
	EscalateTo []string `mapstructure:"escalate_to"`
}

// Budget caps the tokens, or dollars with llm.prices, spent in a period,
// checked before every model call.
type Budget struct {
	// Scope is user, chat, agent, job or all: whose spending one limit
	// covers (each user, each chat… or everything together).
	Scope string `mapstructure:"scope"`
	// Limit is a token count ("200000") or dollars ("$5").
	Limit string `mapstructure:"limit"`
	// Per is day, week or month (UTC).
	Per string `mapstructure:"per"`
}

// Price is what a model costs, in dollars per million tokens.
type Price struct {
	Input      float64 `mapstructure:"input"`
	Output     float64 `mapstructure:"output"`
	CacheRead  float64 `mapstructure:"cache_read"`
	CacheWrite float64 `mapstructure:"cache_write"`
}

// Retention says how long records are kept; 0 keeps them.
type Retention struct {
	// Messages are conversation histories.
	Messages time.Duration `mapstructure:"messages"`
	// Audit is the audit log.
	Audit time.Duration `mapstructure:"audit"`
	// Media are stored attachments.
	Media time.Duration `mapstructure:"media"`
}
