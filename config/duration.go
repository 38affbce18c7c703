package config

import (
	"errors"
	"regexp"
	"strconv"
	"time"
)

// leadingDays matches a duration that starts with whole days: "30d",
// "1d12h".
var leadingDays = regexp.MustCompile(`^([0-9]+)d(.*)$`)

// day is the length of "1d": 24 hours, whatever the calendar does.
const day = 24 * time.Hour

// maxDays keeps a count of days within time.Duration's range.
const maxDays = 100_000

// parseDuration reads a duration as time.ParseDuration does, and also with
// whole days in front ("30d", "1d12h"): retention periods such as
// media.keep are said in days, which Go's units stop short of.
func parseDuration(s string) (time.Duration, error) {
	m := leadingDays.FindStringSubmatch(s)
	if m == nil {
		return time.ParseDuration(s)
	}
	days, err := strconv.Atoi(m[1])
	if err != nil || days > maxDays {
		return 0, errors.New("too many days")
	}
	d := time.Duration(days) * day
	if m[2] == "" {
		return d, nil
	}
	rest, err := time.ParseDuration(m[2])
	if err != nil || rest < 0 {
		return 0, errors.New("not a duration after the days")
	}
	return d + rest, nil
}
