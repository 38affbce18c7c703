package jobs

import (
	"fmt"
	"strings"
	"time"

	"github.com/robfig/cron/v3"
)

// Schedule says when a job runs. It is deterministic: every replica computes
// the same slots from the same spec, which is what lets them agree on who
// runs a slot. The zero Schedule never fires.
type Schedule struct {
	spec  string
	loc   *time.Location
	cron  cron.Schedule // 5/6-field specs and named descriptors
	every time.Duration // "@every d": slots on multiples of d (time.Truncate), the same on every replica
	at    time.Time     // "at <time>": one slot
}

// cronParser accepts 5 fields, an optional leading seconds field and
// descriptors (@hourly …).
var cronParser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// atLayouts are the time forms "at" accepts; those without an offset are in
// the job's time zone.
var atLayouts = []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02 15:04:05"}

// ParseSchedule parses spec in timezone (an IANA name; "" means UTC). It
// accepts cron specs of 5 fields or 6 with seconds first, descriptors
// (@hourly, @daily, @every 10m …), a CRON_TZ= or TZ= prefix (which wins over
// timezone), and one-shot "at <time>" (RFC 3339, or "2006-01-02 15:04" in
// timezone). A malformed spec is an error saying why; it never panics.
func ParseSchedule(spec, timezone string) (s Schedule, err error) {
	spec = strings.TrimSpace(spec)
	fail := func(format string, args ...any) (Schedule, error) {
		return Schedule{}, fmt.Errorf("schedule %q: %s", spec, fmt.Sprintf(format, args...))
	}
	if spec == "" {
		return fail("empty; use 5 cron fields like \"0 9 * * 1-5\", a descriptor like \"@hourly\", or \"at 2026-01-02T15:04:05Z\"")
	}
	loc, err := loadZone(strings.TrimSpace(timezone))
	if err != nil {
		return fail("%v", err)
	}
	body := spec
	if rest, ok := cutZonePrefix(spec); ok {
		name, tail, _ := strings.Cut(rest, " ")
		if loc, err = loadZone(name); err != nil {
			return fail("%v", err)
		}
		body = strings.TrimSpace(tail)
		if body == "" {
			return fail("nothing after the time zone; add the cron fields")
		}
	}
	s = Schedule{spec: spec, loc: loc}
	switch {
	case strings.HasPrefix(body, "at ") || body == "at":
		return parseAt(s, strings.TrimSpace(strings.TrimPrefix(body, "at")), fail)
	case strings.HasPrefix(body, "@every"):
		d, perr := time.ParseDuration(strings.TrimSpace(strings.TrimPrefix(body, "@every")))
		if perr != nil || d < time.Second || d%time.Second != 0 {
			return fail("@every needs a whole number of seconds of at least 1s, like \"@every 10m\"")
		}
		s.every = d
		return s, nil
	case strings.HasPrefix(body, "@"):
	default:
		if n := len(strings.Fields(body)); n != 5 && n != 6 {
			return fail("expected 5 or 6 fields, got %d", n)
		}
	}
	defer func() {
		if p := recover(); p != nil {
			s, err = fail("invalid: %v", p)
		}
	}()
	c, perr := cronParser.Parse("CRON_TZ=" + loc.String() + " " + body)
	if perr != nil {
		return fail("%v", perr)
	}
	utc, perr := cronParser.Parse("CRON_TZ=UTC " + body)
	if perr != nil {
		return fail("%v", perr)
	}
	s.cron = newZonedSchedule(utc, c, loc)
	if s.Next(time.Now()).IsZero() {
		return fail("never fires (no matching date within 5 years)")
	}
	return s, nil
}

// cutZonePrefix strips a leading CRON_TZ= or TZ=.
func cutZonePrefix(spec string) (string, bool) {
	for _, p := range []string{"CRON_TZ=", "TZ="} {
		if rest, ok := strings.CutPrefix(spec, p); ok {
			return rest, true
		}
	}
	return "", false
}

// loadZone loads an IANA time zone; "" is UTC. "Local" is refused so every
// replica agrees whatever its machine's zone.
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "UTC" {
		return time.UTC, nil
	}
	if name == "Local" || strings.ContainsAny(name, " \t") {
		return nil, fmt.Errorf("unknown time zone %q; use an IANA name like \"Europe/Berlin\"", name)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("unknown time zone %q; use an IANA name like \"Europe/Berlin\"", name)
	}
	return loc, nil
}

func parseAt(s Schedule, text string, fail func(string, ...any) (Schedule, error)) (Schedule, error) {
	for _, layout := range atLayouts {
		if t, err := time.ParseInLocation(layout, text, s.loc); err == nil {
			s.at = t.Truncate(time.Second)
			return s, nil
		}
	}
	return fail("\"at\" needs a time like 2026-01-02T15:04:05Z or \"2026-01-02 15:04\"")
}

// Next returns the first slot strictly after `after`, or the zero time when
// there is none (a spent one-shot, or the zero Schedule).
func (s Schedule) Next(after time.Time) time.Time {
	switch {
	case !s.at.IsZero():
		if s.at.After(after) {
			return s.at
		}
		return time.Time{}
	case s.every > 0:
		return after.Truncate(s.every).Add(s.every)
	case s.cron != nil:
		return s.cron.Next(after)
	}
	return time.Time{}
}

// OneShot reports whether the schedule fires at most once ("at …").
func (s Schedule) OneShot() bool { return !s.at.IsZero() }

// Location is the time zone slots are computed in.
func (s Schedule) Location() *time.Location {
	if s.loc == nil {
		return time.UTC
	}
	return s.loc
}

// String returns the spec as given.
func (s Schedule) String() string { return s.spec }
