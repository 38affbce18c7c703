package config

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/viper"
)

// minRetention is the shortest retention period accepted: records must
// outlive the run that reads them.
const minRetention = time.Hour

// validateRetention checks retention: each period is 0 (keep) or at least
// an hour.
func (c *Config) validateRetention(add func(string, ...any)) {
	for _, r := range []struct {
		key string
		d   time.Duration
	}{
		{"retention.messages", c.Retention.Messages},
		{"retention.audit", c.Retention.Audit},
		{"retention.media", c.Retention.Media},
	} {
		if r.d != 0 && r.d < minRetention {
			add("%s must be 0 (keep) or at least 1h (got %s): records must outlive the run that reads them", r.key, r.d)
		}
	}
}

// resolveMediaRetention settles how long attachments are kept, read from
// c.Retention.Media by everything else: retention.media when it is set (in
// the file or the environment), else media.keep, which older files use and
// which defaults to 30d. Both set to different periods is a warning:
// retention.media wins. isSet reports whether a key was set outside the
// defaults.
func (c *Config) resolveMediaRetention(isSet func(key string) bool) {
	retentionSet, keepSet := isSet("retention.media"), isSet("media.keep")
	if !retentionSet {
		c.Retention.Media = c.Media.Keep
		return
	}
	if keepSet && c.Media.Keep != c.Retention.Media {
		c.Warnings = append(c.Warnings, fmt.Sprintf(
			"media.keep (%s) and retention.media (%s) are both set: retention.media is used; remove media.keep",
			c.Media.Keep, describeKeep(c.Retention.Media)))
	}
}

// describeKeep renders a retention period, 0 as "0: keep".
func describeKeep(d time.Duration) string {
	if d == 0 {
		return "0: keep"
	}
	return d.String()
}

// setOutsideDefaults reports whether key was given in the config file or
// by its SWITCHBOARD_* variable (non-empty, as applyEnv reads them).
func setOutsideDefaults(v *viper.Viper, environ []string, key string) bool {
	if v.InConfig(key) {
		return true
	}
	name := field{key: key}.env()
	for _, kv := range environ {
		if n, val, _ := strings.Cut(kv, "="); n == name && val != "" {
			return true
		}
	}
	return false
}
