package config

// validateRetention checks retention.
func (c *Config) validateRetention(add func(string, ...any)) {
}
