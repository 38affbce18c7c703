package budgets

import "time"

// knownPeriods are the periods a budget is counted per (see period).
var knownPeriods = map[string]bool{"day": true, "week": true, "month": true}

// period returns the UTC bounds of the period per that holds t: a day from
// midnight, an ISO week from Monday midnight, a calendar month from the
// 1st.
func period(per string, t time.Time) (start, end time.Time) {
	t = t.UTC()
	day := time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC)
	switch per {
	case "week":
		back := (int(day.Weekday()) + 6) % 7 // days since Monday
		start = day.AddDate(0, 0, -back)
		return start, start.AddDate(0, 0, 7)
	case "month":
		start = time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
		return start, start.AddDate(0, 1, 0)
	default:
		return day, day.AddDate(0, 0, 1)
	}
}
