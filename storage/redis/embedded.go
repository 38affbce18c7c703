package redis

import "log/slog"

// embeddedWarning is logged once when the in-process Redis starts.
const embeddedWarning = "using in-process Redis: single replica only, rate limits and dedupe keys are not durable; set redis.url for production"

// EmbeddedOptions configure StartEmbeddedFor.
type EmbeddedOptions struct {
	// DataDir is switchboard's data directory. The in-process Redis holds
	// a lock there (redis.lock) while it runs, so a second process on the
	// same data directory refuses to start its own (its data would not be
	// shared) instead of splitting rate limits and dedupe keys. Empty: no
	// lock.
	DataDir string
	// Logger receives the package's logs; nil discards them.
	Logger *slog.Logger
}
