package config

// Job is a scheduled agent job defined in the config file (`jobs:`). Config
// is the source for these jobs: they are created or updated on start.
type Job struct {
	Name     string `mapstructure:"name"`
	Schedule string `mapstructure:"schedule"` // cron spec, descriptor, or "at <time>"
	Prompt   string `mapstructure:"prompt"`
	Target   string `mapstructure:"target"` // platform:chat_id[:thread_id]
	Agent    string `mapstructure:"agent"`
	Timezone string `mapstructure:"timezone"`
	// Enabled defaults to true; set false to keep a job defined but paused.
	Enabled *bool  `mapstructure:"enabled"`
	Overlap string `mapstructure:"overlap"`  // skip (default) or queue
	CatchUp string `mapstructure:"catch_up"` // last (default) or none
}

// IsEnabled reports whether the job should run.
func (j Job) IsEnabled() bool { return j.Enabled == nil || *j.Enabled }
