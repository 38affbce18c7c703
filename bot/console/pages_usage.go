package console

import (
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"time"
)

// usageBys are the Usage page's groupings, in the order it offers them.
var usageBys = []string{UsageByAgent, UsageByModel, UsageByIdentity}

// usageSpans are the periods the page offers, in days.
var usageSpans = []int{7, 14, 30}

// chartKeys is how many keys the chart shows apart; the rest is "other".
const chartKeys = 6

// palette colours the chart's keys, "other" last.
var palette = []string{"#2456c7", "#1e7b34", "#c26a00", "#8a3ab9", "#0f8a8a", "#b3261e", "#7a8499"}

// Chart geometry, in SVG user units.
const (
	chartW, chartH          = 720, 260
	chartLeft, chartBottom  = 64, 28
	chartTop, chartRightPad = 10, 8
)

// usageData is what the Usage page shows.
type usageData struct {
	By    string
	Days  int
	Bys   []string
	Spans []int
	Chart usageChart
	Rows  []usageRow
}

// usageRow is one key's total over the period.
type usageRow struct {
	Key, Color, Cost string
	Tokens           int64
}

// usageChart is a stacked bar chart of tokens per day, drawn by the
// template as SVG; every value is a number or a fixed colour, and the
// keys appear only as escaped text.
type usageChart struct {
	W, H   int
	Bars   []usageBar
	Ticks  []usageTick
	Labels []usageTick
	BaseY  int
	Left   int
	Right  int
}

// usageBar is one key's part of one day's bar.
type usageBar struct {
	X, Y, W, H int
	Color      string
	Title      string
}

// usageTick is a label at a position.
type usageTick struct {
	X, Y int
	Text string
}

func (c *Console) usagePage(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d := usageData{By: q.Get("by"), Bys: usageBys, Spans: usageSpans}
	if !slices.Contains(usageBys, d.By) {
		d.By = UsageByAgent
	}
	d.Days, _ = strconv.Atoi(q.Get("days"))
	if !slices.Contains(usageSpans, d.Days) {
		d.Days = 14
	}
	p := page{Title: "Usage", Nav: "usage", Session: current(r)}
	first := time.Now().UTC().Truncate(24*time.Hour).AddDate(0, 0, 1-d.Days)
	days, err := c.o.Store.UsageByDay(r.Context(), d.By, first)
	if err != nil {
		c.log.Error("console: read usage", "err", err)
		p.Error = "Could not read the usage (storage unavailable); reload in a moment."
	}
	d.Rows, d.Chart = usageSummary(days, first, d.Days)
	p.Data = d
	c.render(w, r, http.StatusOK, "usage", p)
}

// usageSummary totals days per key (largest first) and draws the chart of
// the span days from first.
func usageSummary(days []UsageDay, first time.Time, span int) ([]usageRow, usageChart) {
	totals := map[string]*UsageDay{}
	for _, u := range days {
		t := totals[u.Key]
		if t == nil {
			t = &UsageDay{Key: u.Key}
			totals[u.Key] = t
		}
		t.Tokens += u.Tokens
		t.CostMicros += u.CostMicros
		t.Unpriced += u.Unpriced
	}
	keys := make([]string, 0, len(totals))
	for k := range totals {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		a, b := totals[keys[i]], totals[keys[j]]
		return a.Tokens > b.Tokens || a.Tokens == b.Tokens && a.Key < b.Key
	})
	color := map[string]string{}
	rows := make([]usageRow, 0, len(keys))
	for i, k := range keys {
		color[k] = palette[min(i, chartKeys)]
		t := totals[k]
		rows = append(rows, usageRow{Key: shownKey(k), Color: color[k], Tokens: t.Tokens, Cost: costText(t.CostMicros, t.Unpriced)})
	}
	return rows, drawUsage(days, color, keys, first, span)
}

// shownKey names an empty key (a run nobody started, the default).
func shownKey(k string) string {
	if k == "" {
		return "(none)"
	}
	return k
}

// costText shows a cost in dollars, saying when some calls had no price.
func costText(micros, unpriced int64) string {
	switch {
	case unpriced == 0:
		return fmt.Sprintf("$%.4f", float64(micros)/1e6)
	case micros == 0:
		return fmt.Sprintf("unknown (%d calls without a price; see llm.prices)", unpriced)
	}
	return fmt.Sprintf("$%.4f + %d calls without a price", float64(micros)/1e6, unpriced)
}

// drawUsage lays out the stacked bars: one per day, the top keys apart in
// their colours and the rest together as "other".
func drawUsage(days []UsageDay, color map[string]string, keys []string, first time.Time, span int) usageChart {
	ch := usageChart{W: chartW, H: chartH, BaseY: chartH - chartBottom, Left: chartLeft, Right: chartW - chartRightPad}
	type part struct {
		key    string
		tokens int64
	}
	perDay := make([][]part, span)
	var dayMax int64
	sums := make([]int64, span)
	for _, u := range days {
		i := int(u.Day.Sub(first).Hours() / 24)
		if i < 0 || i >= span || u.Tokens <= 0 {
			continue
		}
		k := u.Key
		if slices.Index(keys, k) >= chartKeys {
			k = "\x00other"
		}
		perDay[i] = append(perDay[i], part{k, u.Tokens})
		sums[i] += u.Tokens
		dayMax = max(dayMax, sums[i])
	}
	plotH := ch.BaseY - chartTop
	slot := (ch.Right - ch.Left) / span
	barW := max(slot*7/10, 2)
	for i := range span {
		x := ch.Left + i*slot + (slot-barW)/2
		day := first.AddDate(0, 0, i)
		if span <= 14 || i%3 == 0 {
			ch.Labels = append(ch.Labels, usageTick{X: x + barW/2, Y: chartH - 8, Text: day.Format("01-02")})
		}
		y := ch.BaseY
		for _, p := range perDay[i] {
			h := int(float64(p.tokens) / float64(dayMax) * float64(plotH))
			if h < 1 {
				h = 1
			}
			y -= h
			name, c := shownKey(p.key), color[p.key]
			if p.key == "\x00other" {
				name, c = "other", palette[chartKeys]
			}
			ch.Bars = append(ch.Bars, usageBar{X: x, Y: y, W: barW, H: h, Color: c,
				Title: fmt.Sprintf("%s %s: %d tokens", day.Format("2006-01-02"), name, p.tokens)})
		}
	}
	if dayMax > 0 {
		for _, f := range []float64{0, 0.5, 1} {
			ch.Ticks = append(ch.Ticks, usageTick{X: ch.Left - 6, Y: ch.BaseY - int(f*float64(plotH)), Text: shortCount(int64(f * float64(dayMax)))})
		}
	}
	return ch
}

// shortCount writes a token count briefly: 950, 12.3k, 4.5M.
func shortCount(n int64) string {
	switch {
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1e6)
	case n >= 1_000:
		return fmt.Sprintf("%.1fk", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}
