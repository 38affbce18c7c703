package config

import "fmt"

// EnvWarnings describes, one line each, the SWITCHBOARD_* variables that
// match no setting (UnknownEnv), with the likely intended name when one is
// close: they are ignored, which a typo in a token's name makes confusing.
func (c *Config) EnvWarnings() []string {
	if len(c.UnknownEnv) == 0 {
		return nil
	}
	var known []string
	for _, f := range fields() {
		if f.fileOnly {
			continue
		}
		known = append(known, f.env())
		if f.secret {
			known = append(known, f.env()+fileSuffix)
		}
	}
	out := make([]string, 0, len(c.UnknownEnv))
	for _, name := range c.UnknownEnv {
		if s := suggest(name, known); s != "" {
			out = append(out, fmt.Sprintf("%s is not a setting and is ignored; did you mean %s?", name, s))
		} else {
			out = append(out, fmt.Sprintf("%s is not a setting and is ignored (see README, Configuration)", name))
		}
	}
	return out
}
