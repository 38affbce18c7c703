package usage

import "time"

// Period is a UTC calendar period /usage reports on.
type Period struct {
	Name  string // "today", "this week", "this month"
	Start time.Time
}

// periods are the day, the week (from Monday) and the month now is in,
// in UTC — the periods budgets reset on.
func periods(now time.Time) []Period {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	week := day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
	month := time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
	return []Period{{"today", day}, {"this week", week}, {"this month", month}}
}
