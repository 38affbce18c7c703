package config

// validateApprovalRules checks approvals.groups, approvals.people and
// approvals.rules.
func (c *Config) validateApprovalRules(add func(string, ...any)) {
}
