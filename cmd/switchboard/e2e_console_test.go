package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// consoleLink finds a console login link in a chat message.
var consoleLink = regexp.MustCompile(`http://\S+/admin/login\?t=[a-z2-7]{52}`)

// chatCommand sends text from user in chat and returns the bot's next
// message there (newer than any before).
func chatCommand(ctx context.Context, t *testing.T, tg *telegramtest.Server, chat, user int64, text string) string {
	t.Helper()
	mark := lastID(tg, chat)
	tg.SendText(chat, user, "Someone", text)
	return newReplyContaining(ctx, t, tg, chat, mark, "").Visible
}

// startConsoleE2E runs a daemon whose admin is telegram:500 and whose
// public URL is its own address.
func startConsoleE2E(ctx context.Context, t *testing.T) *telegramE2E {
	t.Helper()
	return startTelegramE2E(ctx, t, func(env map[string]string) {
		env["SWITCHBOARD_ADMINS"] = "telegram:500"
		env["SWITCHBOARD_HTTP_PUBLIC_URL"] = "http://" + env["SWITCHBOARD_HTTP_LISTEN"]
	})
}

// noProblems fails the test when the tab recorded console errors,
// exceptions or error log entries while on page.
func noProblems(t *testing.T, tb *tab, page string) {
	t.Helper()
	if p := tb.take(); len(p) > 0 {
		t.Errorf("%s: the browser reported %q", page, p)
	}
}

// TestE2EConsoleLoginLink: only an admin, only in a direct message, gets a
// link; it logs in once in a real browser; used again, changed or expired
// it is refused.
func TestE2EConsoleLoginLink(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tb := newTab(t)
	e := startConsoleE2E(ctx, t)
	tg := e.tg
	if got := chatCommand(ctx, t, tg, 700, 700, "/login"); !strings.Contains(got, "Only admins") || consoleLink.MatchString(got) {
		t.Fatalf("a non-admin's /login = %q", got)
	}
	if got := chatCommand(ctx, t, tg, -1001, admin, "/login"); !strings.Contains(got, "direct message") || consoleLink.MatchString(got) {
		t.Fatalf("/login in a group = %q", got)
	}
	reply := chatCommand(ctx, t, tg, admin, admin, "/login")
	link := consoleLink.FindString(reply)
	if link == "" {
		t.Fatalf("the admin got no link: %q", reply)
	}
	tb.do(chromedp.Navigate(link), chromedp.Click(chromedp.CSS("#use-link")), chromedp.WaitVisible(chromedp.CSS("#approvals")))
	if who := tb.text("header .who"); who != "telegram:500" {
		t.Errorf("logged in as %q", who)
	}
	noProblems(t, tb, "login")

	refused := func(link, why string) {
		t.Helper()
		other := newTab(t)
		other.do(chromedp.Navigate(link), chromedp.Click(chromedp.CSS("#use-link")), chromedp.WaitVisible(chromedp.CSS("p.error")))
		if msg := other.text("p.error"); !strings.Contains(msg, "not valid") {
			t.Errorf("%s: %q", why, msg)
		}
		if n := evalIn[int](other, `document.querySelectorAll("#approvals").length`); n != 0 {
			t.Errorf("%s logged in", why)
		}
		other.take() // the 403 of the refused login is expected
	}
	refused(link, "the link used again")
	fresh := consoleLink.FindString(chatCommand(ctx, t, tg, admin, admin, "/login"))
	last := fresh[len(fresh)-1:]
	changed := fresh[:len(fresh)-1] + map[bool]string{true: "b", false: "a"}[last == "a"]
	refused(changed, "a changed token")
	conn, err := pgx.Connect(ctx, e.env["SWITCHBOARD_DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE console_login_links SET expires_at = now() - interval '1 second' WHERE used_at IS NULL`); err != nil {
		t.Fatal(err)
	}
	refused(fresh, "an expired link")
	// The daemon logs at debug level here, and still never a link's token.
	for _, l := range []string{link, fresh} {
		if tok := l[strings.LastIndex(l, "=")+1:]; strings.Contains(e.d.out.String(), tok) {
			t.Errorf("the daemon's log holds a login token")
		}
	}
	if got := chatCommand(ctx, t, tg, admin, admin, "/logout"); !strings.Contains(got, "Ended 1") {
		t.Errorf("/logout = %q", got)
	}
	tb.do(chromedp.Navigate("http://"+e.addr+"/admin/approvals"), chromedp.WaitVisible(chromedp.CSS("#use-link, .card code")))
	if loc := evalIn[string](tb, "location.pathname"); loc != "/admin/login" {
		t.Errorf("after /logout the console shows %s", loc)
	}
}

// TestE2EConsoleDecide: an approval whose command carries script and
// event-handler payloads shows in the console live, as text; a decision
// without the CSRF token, or with a wrong one, changes nothing; Allow once
// in the browser edits the admin's message on Telegram, names the admin,
// and the command runs once; a replayed POST changes nothing. Every page
// loads without a console error; screenshots of each are written.
func TestE2EConsoleDecide(t *testing.T) {
	ctx := testCtx(t, 3*time.Minute)
	tb := newTab(t)
	e := startConsoleE2E(ctx, t)
	tg := e.tg
	base := "http://" + e.addr
	shots := screenshotDir(t)

	login := newTab(t)
	login.do(chromedp.Navigate(base+"/admin/login"), chromedp.WaitVisible(chromedp.CSS("main .card")))
	noProblems(t, login, "the login page")
	login.screenshots(shots, "login")

	link := consoleLink.FindString(chatCommand(ctx, t, tg, admin, admin, "/login"))
	tb.do(chromedp.Navigate(link), chromedp.Click(chromedp.CSS("#use-link")), chromedp.WaitVisible(chromedp.CSS("#approvals")))

	const dev = 700
	mark, adminMark := lastID(tg, dev), lastID(tg, admin)
	tg.SendText(dev, dev, `Dev <img src=x onerror=alert(3)>`,
		`please CALL_TOOL:exec {"command":"echo '<script>alert(1)</script><img src=x onerror=alert(2)>' xss-done"}`)
	card := approvalCard(ctx, t, tg, admin, adminMark)
	// The open page shows it without a reload.
	tb.do(chromedp.WaitVisible(chromedp.CSS("article.approval")))
	if cmd := tb.text("article.approval pre.command"); !strings.Contains(cmd, "<script>alert(1)</script><img src=x onerror=alert(2)>") {
		t.Errorf("the command shows as %q, want its text", cmd)
	}
	if n := evalIn[int](tb, `document.querySelectorAll("main img, main script").length`); n != 0 {
		t.Errorf("the chat's text made %d elements", n)
	}
	noProblems(t, tb, "approvals")
	tb.screenshots(shots, "approvals")

	form := `document.querySelector("article.approval form.decide")`
	post := func(body string) string {
		t.Helper()
		return evalIn[string](tb, `fetch(`+form+`.action, {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"},
			body: `+body+`}).then(r => r.status + " " + r.url)`)
	}
	for _, body := range []string{`"decision=allow_once"`, `"decision=allow_once&csrf=forged"`} {
		if got := post(body); !strings.HasPrefix(got, "403 ") {
			t.Errorf("POST %s = %s, want 403", body, got)
		}
	}
	tb.take() // the two 403s are expected
	for _, m := range tg.Messages(admin) {
		if m.ID == card.ID && m.Edits > 0 {
			t.Fatalf("a refused POST edited the approval message: %q", m.Visible)
		}
	}
	csrf := evalIn[string](tb, form+`.querySelector("input[name=csrf]").value`)
	action := evalIn[string](tb, form+`.action`)

	tb.do(chromedp.Click(chromedp.CSS(`article.approval button[value="allow_once"]`)), chromedp.WaitVisible(chromedp.CSS("p.notice")))
	if n := tb.text("p.notice"); !strings.Contains(n, "Allowed once") {
		t.Errorf("after Allow once the page says %q", n)
	}
	edited := waitEditedAgain(ctx, t, tg, admin, card.ID)
	if !strings.Contains(edited.Visible, "Allowed once by telegram:500") {
		t.Errorf("the chat's approval message is now %q; want the admin named", edited.Visible)
	}
	newReplyContaining(ctx, t, tg, dev, mark, "xss-done")
	if got := evalIn[string](tb, `fetch("`+action+`", {method: "POST", headers: {"Content-Type": "application/x-www-form-urlencoded"},
		body: "decision=allow_once&csrf=`+csrf+`"}).then(r => r.status + " " + r.url)`); !strings.Contains(got, "done=closed") {
		t.Errorf("the replayed POST = %s, want it told the approval was decided already", got)
	}
	time.Sleep(500 * time.Millisecond) // a second run would deliver by now
	runs := 0
	for _, m := range tg.Messages(dev) {
		if m.ID > mark && strings.Contains(m.Visible, "tool exec said") && strings.Contains(m.Visible, "xss-done") {
			runs++
		}
	}
	if runs != 1 {
		t.Errorf("the command's output reached the chat %d times, want 1", runs)
	}

	tourConsolePages(t, tb, base, shots)
	if d := append(tb.dialogsOpened(), login.dialogsOpened()...); len(d) > 0 {
		t.Errorf("dialogs opened: %q", d)
	}
	t.Logf("screenshots in %s", shots)
}

// TestE2EConsoleJobs: a job added in the chat shows on the Jobs page with
// its next run; Run now runs it once into its chat and the run shows with
// its status; Pause pauses it, as /jobs then says.
func TestE2EConsoleJobs(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tb := newTab(t)
	e := startConsoleE2E(ctx, t)
	tg := e.tg
	base := "http://" + e.addr
	if got := chatCommand(ctx, t, tg, admin, admin, "/jobs add 0 9 * * * | report the weather"); !strings.Contains(got, "Added job report-the-weather") {
		t.Fatalf("/jobs add = %q", got)
	}
	link := consoleLink.FindString(chatCommand(ctx, t, tg, admin, admin, "/login"))
	tb.do(chromedp.Navigate(link), chromedp.Click(chromedp.CSS("#use-link")), chromedp.WaitVisible(chromedp.CSS("#approvals")),
		chromedp.Navigate(base+"/admin/jobs"), chromedp.WaitVisible(chromedp.CSS("#job-report-the-weather")))
	if s := tb.text("#job-report-the-weather"); !strings.Contains(s, "next run 20") || !strings.Contains(s, "report the weather") {
		t.Fatalf("the job shows as %q", s)
	}
	noProblems(t, tb, "jobs")

	mark := lastID(tg, admin)
	tb.do(chromedp.Click(chromedp.CSS(`#job-report-the-weather button[value="run"]`)), chromedp.WaitVisible(chromedp.CSS("p.notice")))
	if n := tb.text("p.notice"); !strings.Contains(n, "Queued") {
		t.Errorf("after Run now the page says %q", n)
	}
	newReplyContaining(ctx, t, tg, admin, mark, "report the weather")
	eventually(ctx, t, "the run shows as succeeded", func() bool {
		tb.do(chromedp.Navigate(base+"/admin/jobs"), chromedp.WaitVisible(chromedp.CSS("#job-report-the-weather")))
		return strings.Contains(tb.text("#job-report-the-weather"), "succeeded")
	})
	noProblems(t, tb, "jobs with a run")
	tb.screenshots(screenshotDir(t), "jobs")

	tb.do(chromedp.Click(chromedp.CSS(`#job-report-the-weather button[value="pause"]`)), chromedp.WaitVisible(chromedp.CSS("p.notice")),
		chromedp.WaitVisible(chromedp.CSS(`#job-report-the-weather button[value="resume"]`)))
	if s := tb.text("#job-report-the-weather"); !strings.Contains(s, "paused") {
		t.Errorf("after Pause the job shows as %q", s)
	}
	if got := chatCommand(ctx, t, tg, admin, admin, "/jobs"); !strings.Contains(got, "report-the-weather") || !strings.Contains(got, "paused") {
		t.Errorf("/jobs after the console paused it = %q", got)
	}
}

// TestE2EConsoleAccess: a stranger's access request, whose name carries an
// event-handler payload, shows on the Access page as text; Approve lets
// them in as the chat's button does (they are told, the admin's message
// is edited); Revoke takes it away again.
func TestE2EConsoleAccess(t *testing.T) {
	ctx := testCtx(t, 2*time.Minute)
	tb := newTab(t)
	e := startTelegramE2E(ctx, t, func(env map[string]string) {
		env["SWITCHBOARD_ADMINS"] = "telegram:500"
		env["SWITCHBOARD_HTTP_PUBLIC_URL"] = "http://" + env["SWITCHBOARD_HTTP_LISTEN"]
		env["SWITCHBOARD_ACCESS_MODE"] = "request"
	})
	tg := e.tg
	base := "http://" + e.addr
	const stranger = 600
	adminMark := lastID(tg, admin)
	tg.SendText(stranger, stranger, `Eve<img src=x onerror=alert(5)>`, "hello, may I?")
	req := newReplyContaining(ctx, t, tg, admin, adminMark, "telegram:600")
	link := consoleLink.FindString(chatCommand(ctx, t, tg, admin, admin, "/login"))
	tb.do(chromedp.Navigate(link), chromedp.Click(chromedp.CSS("#use-link")), chromedp.WaitVisible(chromedp.CSS("#approvals")),
		chromedp.Navigate(base+"/admin/access"), chromedp.WaitVisible(chromedp.CSS("article.access-request")))
	if s := tb.text("article.access-request"); !strings.Contains(s, "Eve<img src=x onerror=alert(5)>") || !strings.Contains(s, "telegram:600") {
		t.Errorf("the request shows as %q", s)
	}
	if n := evalIn[int](tb, `document.querySelectorAll("main img").length`); n != 0 {
		t.Errorf("the stranger's name made %d elements", n)
	}
	noProblems(t, tb, "access")
	tb.screenshots(screenshotDir(t), "access")

	mark := lastID(tg, stranger)
	tb.do(chromedp.Click(chromedp.CSS(`article.access-request button[value="approve"]`)), chromedp.WaitVisible(chromedp.CSS("p.notice")),
		chromedp.WaitVisible(chromedp.CSS("tr.allowed")))
	newReplyContaining(ctx, t, tg, stranger, mark, "let you in")
	if m := waitEdited(ctx, t, tg, admin, req.ID); len(m.Buttons) != 0 || !strings.Contains(m.Visible, "telegram:500") {
		t.Errorf("the admin's request message after the console's decision = %q (buttons %v)", m.Visible, m.Buttons)
	}
	// The page after Approve shows a notice already: wait for Revoke's page.
	tb.do(chromedp.Click(chromedp.CSS(`tr.allowed button`)))
	tb.waitLocation("done=revoked")
	tb.do(chromedp.WaitVisible(chromedp.CSS("p.notice")))
	if n := tb.text("p.notice"); !strings.Contains(n, "Revoked") {
		t.Errorf("after Revoke the page says %q", n)
	}
	if n := evalIn[int](tb, `document.querySelectorAll("tr.allowed").length`); n != 0 {
		t.Errorf("%d identities still listed after the revoke", n)
	}
	noProblems(t, tb, "access after the changes")
	if d := tb.dialogsOpened(); len(d) > 0 {
		t.Errorf("dialogs opened: %q", d)
	}
}
