package config

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseRate parses a rate limit: "N/s", "N/m" or "N/h" (N ≥ 1) gives N
// events per second, minute or hour; "off" disables the limit.
func ParseRate(s string) (count int, per time.Duration, off bool, err error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t == "off" {
		return 0, 0, true, nil
	}
	n, unit, ok := strings.Cut(t, "/")
	if !ok {
		return 0, 0, false, fmt.Errorf("%q is not N/s, N/m, N/h or off", s)
	}
	switch strings.TrimSpace(unit) {
	case "s":
		per = time.Second
	case "m":
		per = time.Minute
	case "h":
		per = time.Hour
	default:
		return 0, 0, false, fmt.Errorf("%q is not N/s, N/m, N/h or off", s)
	}
	count, err = strconv.Atoi(strings.TrimSpace(n))
	if err != nil {
		return 0, 0, false, fmt.Errorf("%q is not N/s, N/m, N/h or off", s)
	}
	if count < 1 {
		return 0, 0, false, errors.New("the count must be at least 1 (use off to disable the limit)")
	}
	return count, per, false, nil
}
