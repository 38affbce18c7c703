package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// tourConsolePages opens every page after TestE2EConsoleDecide's decision
// and checks what it shows of it: the audit log names the admin, the
// usage chart has the run's calls, the conversation shows its tool step
// and approval as text, the agent its tools; none logs a console error.
// Screenshots of each go to shots.
func tourConsolePages(t *testing.T, tb *tab, base, shots string) {
	t.Helper()
	tb.do(chromedp.Navigate(base+"/admin/audit?action=approval.decided&tool=exec&outcome=allowed_once"), chromedp.WaitVisible(chromedp.CSS("table")))
	if row := tb.text("table tbody"); !strings.Contains(row, "telegram:500") {
		t.Errorf("the audit log does not name the admin: %q", row)
	}
	noProblems(t, tb, "audit")
	tb.do(chromedp.Navigate(base + "/admin/audit"))
	tb.screenshots(shots, "audit")
	tb.do(chromedp.Navigate(base+"/admin/usage"), chromedp.WaitVisible(chromedp.CSS("svg.chart")))
	if n := evalIn[int](tb, `document.querySelectorAll("svg.chart rect").length`); n == 0 {
		t.Error("the usage chart has no bars after the run's model calls")
	}
	noProblems(t, tb, "usage")
	tb.screenshots(shots, "usage")
	tb.do(chromedp.Navigate(base+"/admin/conversations?q=telegram:700"), chromedp.WaitVisible(chromedp.CSS("tr.conversation")))
	noProblems(t, tb, "conversations")
	tb.screenshots(shots, "conversations")
	tb.do(chromedp.Click(chromedp.CSS("tr.conversation a")), chromedp.WaitVisible(chromedp.CSS("article.message")))
	conv := tb.text("main")
	for _, want := range []string{"please CALL_TOOL:exec", "<script>alert(1)</script><img src=x onerror=alert(2)>", "allowed_once by telegram:500", "→ exec"} {
		if !strings.Contains(conv, want) {
			t.Errorf("the conversation page lacks %q: %q", want, conv)
		}
	}
	if n := evalIn[int](tb, `document.querySelectorAll("main img, main script").length`); n != 0 {
		t.Errorf("the conversation's text made %d elements", n)
	}
	noProblems(t, tb, "conversation")
	tb.screenshots(shots, "conversation")
	tb.do(chromedp.Navigate(base+"/admin/agents"), chromedp.WaitVisible(chromedp.CSS("article.agent")))
	if s := tb.text("article.agent"); !strings.Contains(s, "test-model") || !regexp.MustCompile(`exec\s+\S+\s+per call, by the tool`).MatchString(s) {
		t.Errorf("the Agents page shows %q; want the model and exec asking per call", s)
	}
	noProblems(t, tb, "agents")
	tb.screenshots(shots, "agents")
	tb.do(chromedp.Navigate(base+"/admin/system"), chromedp.WaitVisible(chromedp.CSS(".checks")))
	if s := tb.text("main"); !strings.Contains(s, "postgres ok") || !strings.Contains(s, "redis ok") || !strings.Contains(s, "telegram ok") {
		t.Errorf("the System page says %q", s)
	}
	noProblems(t, tb, "system")
	tb.screenshots(shots, "system")
}
