package config

// validateBudgets checks budgets and llm.prices.
func (c *Config) validateBudgets(add func(string, ...any)) {
}
