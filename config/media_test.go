package config

import (
	"strings"
	"testing"
	"time"
)

func TestConfigMediaDefaultsAndEnv(t *testing.T) {
	c := Defaults()
	if c.Media.MaxBytes != 20_000_000 || c.Media.Keep != 30*24*time.Hour {
		t.Fatalf("media defaults = %+v, want 20000000 bytes and 30 days", c.Media)
	}
	c = *mustLoad(t, LoadOptions{File: writeFile(t, "media:\n  keep: 7d\n"), Environ: []string{"SWITCHBOARD_MEDIA_MAX_BYTES=5000000"}})
	if c.Media.MaxBytes != 5_000_000 || c.Media.Keep != 7*24*time.Hour {
		t.Fatalf("media from file and env = %+v, want 5000000 bytes and 7 days", c.Media)
	}
	c = *mustLoad(t, LoadOptions{File: writeFile(t, ""), Environ: []string{"SWITCHBOARD_MEDIA_KEEP=1d12h"}})
	if c.Media.Keep != 36*time.Hour {
		t.Fatalf("SWITCHBOARD_MEDIA_KEEP=1d12h gives %s, want 36h", c.Media.Keep)
	}
}

func TestConfigDurationsInDays(t *testing.T) {
	good := map[string]time.Duration{"30d": 30 * 24 * time.Hour, "0d": 0, "1d30m": 24*time.Hour + 30*time.Minute, "90s": 90 * time.Second, "2h": 2 * time.Hour}
	for s, want := range good {
		if got, err := parseDuration(s); err != nil || got != want {
			t.Errorf("parseDuration(%q) = %s, %v; want %s", s, got, err, want)
		}
	}
	for _, s := range []string{"d", "1.5d", "-1d", "1d-1h", "1dd", "999999999999d", "soon"} {
		if got, err := parseDuration(s); err == nil {
			t.Errorf("parseDuration(%q) = %s, want an error", s, got)
		}
	}
	_, err := Load(LoadOptions{File: writeFile(t, "media:\n  keep: a month\n"), Environ: []string{}})
	if err == nil || !strings.Contains(err.Error(), `media.keep: "a month" is not a duration: use a number with a unit, e.g. 90s, 2m or 30d`) {
		t.Errorf("Load of keep: a month = %v, want a message that says how to write it", err)
	}
}

func TestConfigMediaValidation(t *testing.T) {
	tests := []struct {
		mutate func(m *Media)
		want   string
	}{
		{func(m *Media) { m.MaxBytes = 0 }, "media.max_bytes must be more than 0 (got 0); the default 20000000 (20 MB)"},
		{func(m *Media) { m.MaxBytes = -5 }, "media.max_bytes must be more than 0 (got -5)"},
		{func(m *Media) { m.Keep = time.Minute }, "media.keep must be at least 1h (got 1m0s)"},
	}
	for _, tt := range tests {
		c := valid()
		tt.mutate(&c.Media)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Validate = %v, want it to contain %q", err, tt.want)
		}
	}
}
