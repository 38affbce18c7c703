package jobs

import (
	"strings"
	"testing"
	"time"
)

func mustParse(t *testing.T, spec, tz string) Schedule {
	t.Helper()
	s, err := ParseSchedule(spec, tz)
	if err != nil {
		t.Fatalf("ParseSchedule(%q, %q): %v", spec, tz, err)
	}
	return s
}

func TestScheduleHoChiMinhFiresInUTC(t *testing.T) {
	after := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	want := time.Date(2026, 3, 1, 0, 26, 0, 0, time.UTC)
	for _, c := range []struct{ spec, tz string }{
		{"26 7 * * *", "Asia/Ho_Chi_Minh"},
		{"CRON_TZ=Asia/Ho_Chi_Minh 26 7 * * *", ""},
		{"TZ=Asia/Ho_Chi_Minh 0 26 7 * * *", "Europe/Berlin"}, // prefix wins
	} {
		got := mustParse(t, c.spec, c.tz).Next(after)
		if !got.Equal(want) {
			t.Errorf("%q in %q: next = %s, want %s", c.spec, c.tz, got.UTC(), want)
		}
	}
}

// TestScheduleBerlinDST walks a daily job across both DST changes of a year
// and checks it fires once per local day, never skipping or doubling.
func TestScheduleBerlinDST(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	for _, spec := range []string{"30 2 * * *", "0 3 * * *", "0 9 * * *", "@daily"} {
		s := mustParse(t, spec, "Europe/Berlin")
		cur := time.Date(2026, 3, 20, 12, 0, 0, 0, berlin)
		days := map[string]int{}
		for i := 0; i < 240; i++ {
			next := s.Next(cur)
			if !next.After(cur) {
				t.Fatalf("%q: next %s not after %s", spec, next, cur)
			}
			days[next.In(berlin).Format("2006-01-02")]++
			cur = next
		}
		for d := time.Date(2026, 3, 21, 12, 0, 0, 0, berlin); d.Before(cur.AddDate(0, 0, -1)); d = d.AddDate(0, 0, 1) {
			key := d.Format("2006-01-02")
			if days[key] != 1 {
				t.Errorf("%q: %s fired %d times, want 1", spec, key, days[key])
			}
		}
		for _, key := range []string{"2026-03-29", "2026-10-25"} {
			if days[key] != 1 {
				t.Errorf("%q: DST day %s fired %d times, want 1", spec, key, days[key])
			}
		}
	}
}

func TestScheduleForms(t *testing.T) {
	base := time.Date(2026, 5, 4, 10, 0, 3, 500, time.UTC)
	cases := []struct {
		spec string
		want time.Time
	}{
		{"*/15 * * * *", time.Date(2026, 5, 4, 10, 15, 0, 0, time.UTC)},
		{"*/2 * * * * *", time.Date(2026, 5, 4, 10, 0, 4, 0, time.UTC)},
		{"@hourly", time.Date(2026, 5, 4, 11, 0, 0, 0, time.UTC)},
		{"@every 10m", time.Date(2026, 5, 4, 10, 10, 0, 0, time.UTC)},
		{"@every 2s", time.Date(2026, 5, 4, 10, 0, 4, 0, time.UTC)},
		{"at 2026-05-04T12:00:00+02:00", time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC).Add(0)},
		{"at 2026-05-05 08:30", time.Date(2026, 5, 5, 8, 30, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		got := mustParse(t, c.spec, "").Next(base)
		if c.spec == "at 2026-05-04T12:00:00+02:00" {
			// 10:00:00Z is before base (10:00:03Z): the one-shot is spent.
			if !got.IsZero() {
				t.Errorf("%q: spent one-shot next = %s, want zero", c.spec, got)
			}
			continue
		}
		if !got.Equal(c.want) {
			t.Errorf("%q: next = %s, want %s", c.spec, got.UTC(), c.want)
		}
	}
	at := mustParse(t, "at 2026-05-05 08:30", "Asia/Ho_Chi_Minh")
	if !at.OneShot() || !at.Next(base).Equal(time.Date(2026, 5, 5, 1, 30, 0, 0, time.UTC)) {
		t.Errorf("at in Ho Chi Minh: next = %s", at.Next(base).UTC())
	}
	if got := at.Next(at.Next(base)); !got.IsZero() {
		t.Errorf("one-shot fired twice: %s", got)
	}
}

// TestScheduleEveryAgreesAcrossReplicas checks @every slots do not depend
// on when a replica looks.
func TestScheduleEveryAgreesAcrossReplicas(t *testing.T) {
	s := mustParse(t, "@every 5s", "")
	a := s.Next(time.Date(2026, 1, 1, 0, 0, 1, 100, time.UTC))
	b := s.Next(time.Date(2026, 1, 1, 0, 0, 4, 999, time.UTC))
	if !a.Equal(b) {
		t.Errorf("slots differ: %s vs %s", a, b)
	}
}

func TestScheduleErrors(t *testing.T) {
	cases := []struct{ spec, tz, want string }{
		{"* * *", "", `schedule "* * *": expected 5 or 6 fields, got 3`},
		{"* * * * * * *", "", "expected 5 or 6 fields, got 7"},
		{"", "", "empty"},
		{"TZ=0", "", "unknown time zone"},
		{"CRON_TZ=Mars/Olympus * * * * *", "", `unknown time zone "Mars/Olympus"`},
		{"* * * * *", "Nowhere/City", `unknown time zone "Nowhere/City"`},
		{"TZ=UTC", "", "nothing after the time zone"},
		{"61 * * * *", "", "schedule \"61 * * * *\""},
		{"0 0 30 2 *", "", "never fires"},
		{"@fortnightly", "", "schedule \"@fortnightly\""},
		{"@every 10ms", "", "at least 1s"},
		{"@every soon", "", "@every needs"},
		{"at tomorrow", "", "\"at\" needs a time"},
		{"* * * * *", "Local", "unknown time zone"},
	}
	for _, c := range cases {
		_, err := ParseSchedule(c.spec, c.tz)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseSchedule(%q, %q) = %v, want error containing %q", c.spec, c.tz, err, c.want)
		}
	}
}

func FuzzParseSchedule(f *testing.F) {
	for _, s := range []string{"* * * * *", "TZ=0", "CRON_TZ=", "@every 1s", "at 2026-01-01T00:00:00Z",
		"0 0 30 2 *", "*/0 * * * *", "1-0 * * * *", "TZ=Europe/Berlin 0 9 * * 1-5", "@every -1s", "0-59/ * * * *"} {
		f.Add(s, "")
	}
	f.Add("* * * * *", "Asia/Ho_Chi_Minh")
	f.Fuzz(func(t *testing.T, spec, tz string) {
		s, err := ParseSchedule(spec, tz)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "schedule ") {
				t.Fatalf("error does not name the schedule: %v", err)
			}
			return
		}
		after := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		if next := s.Next(after); !next.IsZero() && !next.After(after) {
			t.Fatalf("%q: next %s not after %s", spec, next, after)
		}
	})
}

// TestScheduleBerlinDSTHourly checks a job every 15 minutes keeps real time
// across the changes: 92 slots on the 23-hour day, 100 on the 25-hour day.
func TestScheduleBerlinDSTHourly(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skipf("no tzdata: %v", err)
	}
	s := mustParse(t, "*/15 * * * *", "Europe/Berlin")
	for day, want := range map[int]int{29: 92, 25: 100} {
		month := time.March
		if day == 25 {
			month = time.October
		}
		start := time.Date(2026, month, day, 0, 0, 0, 0, berlin).Add(-time.Second)
		end := time.Date(2026, month, day+1, 0, 0, 0, 0, berlin).Add(-time.Second)
		n := 0
		for cur := s.Next(start); !cur.After(end); cur = s.Next(cur) {
			n++
		}
		if n != want {
			t.Errorf("%s %d: %d slots, want %d", month, day, n, want)
		}
	}
}
