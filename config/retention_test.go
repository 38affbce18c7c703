package config

import (
	"strings"
	"testing"
	"time"
)

func TestRetentionBareZeroMeansKeep(t *testing.T) {
	c := mustLoad(t, LoadOptions{File: writeFile(t, "retention: {messages: 0, audit: 0, media: 0}\n")})
	if c.Retention != (Retention{}) {
		t.Errorf("retention = %+v, want all 0 (keep)", c.Retention)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("0 (keep) does not validate: %v", err)
	}
	if len(c.Warnings) != 0 {
		t.Errorf("warnings = %q", c.Warnings)
	}
}

func TestRetentionNonZeroNumberStillNeedsAUnit(t *testing.T) {
	_, err := Load(LoadOptions{File: writeFile(t, "retention: {messages: 30}\n"), Environ: []string{}})
	if err == nil || !strings.Contains(err.Error(), "retention.messages") || !strings.Contains(err.Error(), "no unit") {
		t.Fatalf("Load = %v, want retention.messages: no unit", err)
	}
}

func TestRetentionMediaPrecedence(t *testing.T) {
	cases := []struct {
		name, file string
		env        []string
		want       time.Duration
		warn       bool
	}{
		{"neither: media.keep's default", "", nil, 30 * day, false},
		{"media.keep only", "media: {keep: 7d}\n", nil, 7 * day, false},
		{"retention.media only", "retention: {media: 90d}\n", nil, 90 * day, false},
		{"retention.media 0 keeps", "retention: {media: 0}\n", nil, 0, false},
		{"both, same", "media: {keep: 7d}\nretention: {media: 7d}\n", nil, 7 * day, false},
		{"both, different: retention.media wins", "media: {keep: 7d}\nretention: {media: 90d}\n", nil, 90 * day, true},
		{"env sets retention.media", "media: {keep: 7d}\n", []string{"SWITCHBOARD_RETENTION_MEDIA=14d"}, 14 * day, true},
		{"env sets media.keep", "", []string{"SWITCHBOARD_MEDIA_KEEP=3d"}, 3 * day, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env := tc.env
			if env == nil {
				env = []string{}
			}
			c := mustLoad(t, LoadOptions{File: writeFile(t, "log: {level: info}\n"+tc.file), Environ: env})
			if c.Retention.Media != tc.want {
				t.Errorf("retention.media = %s, want %s", c.Retention.Media, tc.want)
			}
			if got := len(c.Warnings) == 1 && strings.Contains(c.Warnings[0], "retention.media is used"); got != tc.warn {
				t.Errorf("warnings = %q, want a warning: %v", c.Warnings, tc.warn)
			}
		})
	}
}

func TestRetentionValidate(t *testing.T) {
	for _, tc := range []struct {
		r    Retention
		want string
	}{
		{Retention{Messages: time.Minute}, "retention.messages must be 0 (keep) or at least 1h"},
		{Retention{Audit: -time.Hour}, "retention.audit must be 0 (keep) or at least 1h"},
		{Retention{Media: 30 * time.Minute}, "retention.media must be 0 (keep) or at least 1h"},
	} {
		c := Defaults()
		c.Retention = tc.r
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate(%+v) = %v, want %q", tc.r, err, tc.want)
		}
	}
	c := Defaults()
	c.Retention = Retention{Messages: 90 * day, Audit: 365 * day, Media: 30 * day}
	if err := c.Validate(); err != nil {
		t.Errorf("valid retention refused: %v", err)
	}
}
