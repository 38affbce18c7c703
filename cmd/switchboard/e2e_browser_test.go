package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// The one headless Chromium of this test binary, started by the first
// browser test and stopped by TestMain.
var (
	browserOnce   sync.Once
	browserCtx    context.Context
	browserErr    error
	browserCancel = func() {}
)

// chromiumPath finds Debian's chromium (or another Chrome) on PATH.
func chromiumPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// stopBrowser ends the shared browser, if one started.
func stopBrowser() { browserCancel() }

// sharedBrowser starts the binary's browser once. Without Chromium a test
// is skipped locally and fails in CI, where .ci/run installs it.
func sharedBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath()
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("Chromium is missing; CI must install it (apt-get install chromium; .ci/run does)")
		}
		t.Skip("no Chromium on PATH (apt-get install chromium); the browser tests run in CI")
	}
	browserOnce.Do(func() {
		opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox,
			chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1280, 900))
		alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
		ctx, cancelBrowser := chromedp.NewContext(alloc)
		browserCancel = func() { cancelBrowser(); cancelAlloc() }
		browserCtx = ctx
		start, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- chromedp.Do(ctx) }()
		select {
		case browserErr = <-done:
		case <-start.Done():
			browserErr = fmt.Errorf("chromium did not start within 30s")
		}
	})
	if browserErr != nil {
		t.Fatalf("start Chromium: %v", browserErr)
	}
	return browserCtx
}

// tab is one browser tab in a fresh profile of its own (no cookies
// shared with other tabs), recording what a page must never do.
type tab struct {
	t   *testing.T
	ctx context.Context
	mu  sync.Mutex
	// problems are console errors, uncaught exceptions and error log
	// entries (CSP violations, failed loads) since the last take.
	problems []string
	// dialogs are the JavaScript dialogs that opened (alert, confirm…).
	dialogs []string
}

// newTab opens a tab in a new browser context; it closes when the test
// ends.
func newTab(t *testing.T) *tab {
	t.Helper()
	parent := sharedBrowser(t)
	tb := &tab{t: t}
	ctx, cancel := chromedp.NewContext(parent, chromedp.WithNewBrowserContext(), chromedp.WithListener(tb.event))
	t.Cleanup(cancel)
	tb.ctx = ctx
	// The first run opens the tab, which lives as long as that run's
	// context: tb.ctx itself, not a bounded child of it.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a browser tab: %v", err)
	}
	return tb
}

// event records the events a page must not cause. A dialog is dismissed
// from another goroutine: a listener must not send commands.
func (tb *tab) event(ev any) {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	switch e := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if e.Type == runtime.ConsoleAPICalledTypeError || e.Type == runtime.ConsoleAPICalledTypeWarning ||
			e.Type == runtime.ConsoleAPICalledTypeAssert {
			var args []string
			for _, a := range e.Args {
				args = append(args, string(a.Value)+a.Description)
			}
			tb.problems = append(tb.problems, "console."+string(e.Type)+": "+strings.Join(args, " "))
		}
	case *runtime.EventExceptionThrown:
		tb.problems = append(tb.problems, "exception: "+e.ExceptionDetails.Text+" "+descr(e.ExceptionDetails))
	case *cdplog.EventEntryAdded:
		if e.Entry.Level == cdplog.EntryLevelError || e.Entry.Level == cdplog.EntryLevelWarning {
			tb.problems = append(tb.problems, "log "+string(e.Entry.Source)+": "+e.Entry.Text+" "+e.Entry.URL)
		}
	case *page.EventJavascriptDialogOpening:
		tb.dialogs = append(tb.dialogs, string(e.Type)+": "+e.Message)
		go func() {
			_ = chromedp.Do(tb.ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
				_, err := cdp.Call(ctx, t, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: false})
				return err
			}))
		}()
	}
}

func descr(d *runtime.ExceptionDetails) string {
	if d.Exception != nil {
		return d.Exception.Description
	}
	return ""
}

// take returns and forgets the problems recorded so far.
func (tb *tab) take() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	p := tb.problems
	tb.problems = nil
	return p
}

// dialogsOpened returns every dialog that opened in the tab.
func (tb *tab) dialogsOpened() []string {
	tb.mu.Lock()
	defer tb.mu.Unlock()
	return append([]string(nil), tb.dialogs...)
}

// do runs steps in the tab, each bounded, failing the test on an error.
func (tb *tab) do(steps ...chromedp.Action[chromedp.Void]) {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		lctx, cancel := context.WithTimeout(tb.ctx, 2*time.Second)
		defer cancel()
		loc, _ := chromedp.Run(lctx, chromedp.Location())
		tb.t.Fatalf("browser at %s: %v", loc, err)
	}
}

// eval evaluates a JavaScript expression (awaiting a promise) in the page.
func evalIn[T any](tb *tab, expr string) T {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		tb.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// text returns the visible text of the first element matching sel.
func (tb *tab) text(sel string) string {
	tb.t.Helper()
	ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
	defer cancel()
	s, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		tb.t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// screenshotDir is where page screenshots go: $SWITCHBOARD_SCREENSHOTS,
// else a directory of the test's own.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("SWITCHBOARD_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// screenshots writes the current page at desktop and phone width as
// dir/name-desktop.png and dir/name-phone.png.
func (tb *tab) screenshots(dir, name string) {
	tb.t.Helper()
	for _, size := range []struct {
		label         string
		width, height int64
		mobile        bool
	}{{"desktop", 1280, 900, false}, {"phone", 390, 844, true}} {
		opts := []chromedp.EmulateViewportOption{chromedp.EmulateScale(1)}
		if size.mobile {
			opts = append(opts, chromedp.EmulatePortrait)
		}
		tb.do(chromedp.EmulateViewport(size.width, size.height, opts...))
		ctx, cancel := context.WithTimeout(tb.ctx, 20*time.Second)
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		cancel()
		if err != nil {
			tb.t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name+"-"+size.label+".png"), png, 0o644); err != nil {
			tb.t.Fatal(err)
		}
	}
	tb.do(chromedp.EmulateViewport(1280, 900))
}

// waitLocation waits until the tab's address contains part: the page a
// click navigated to has loaded.
func (tb *tab) waitLocation(part string) {
	tb.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(tb.ctx, 2*time.Second)
		loc, err := chromedp.Run(ctx, chromedp.Evaluate[string]("document.readyState === 'complete' ? location.href : ''"))
		cancel()
		if err == nil && strings.Contains(loc, part) {
			return
		}
		if time.Now().After(deadline) {
			tb.t.Fatalf("the browser never reached an address with %q (at %q, %v)", part, loc, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the page, which has no event to wait on here
	}
}
