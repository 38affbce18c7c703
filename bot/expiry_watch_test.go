package bot_test

import (
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot"
)

// every is the watch's longest time between looks in these tests.
const every = 10 * time.Second

func TestExpiryWatch(t *testing.T) {
	t0 := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
	w := bot.ExpiryWatch{Every: every}
	if !w.Begin(t0) {
		t.Fatal("a watch that never looked is not due")
	}
	// A failed look records nothing: the next call is due too.
	if !w.Begin(t0.Add(time.Second)) {
		t.Fatal("not due after a look that failed")
	}
	w.Looked(t0, t0.Add(5*time.Second))
	if w.Begin(t0.Add(4 * time.Second)) {
		t.Error("due before the next known expiry")
	}
	if !w.Begin(t0.Add(5 * time.Second)) {
		t.Error("not due at the next known expiry")
	}

	// Nothing pending: due again after every.
	w.Looked(t0, time.Time{})
	if w.Begin(t0.Add(every - time.Millisecond)) {
		t.Error("due before every with nothing pending")
	}
	if !w.Begin(t0.Add(every)) {
		t.Error("not due every after a look that found nothing")
	}
	// A far expiry does not put the look off longer than every.
	w.Looked(t0, t0.Add(time.Hour))
	if !w.Begin(t0.Add(every)) {
		t.Error("a far expiry put the look off beyond every")
	}

	// An approval this process asks for between looks brings the look forward.
	w.Looked(t0, time.Time{})
	w.Note(t0.Add(2 * time.Second))
	if w.Begin(t0.Add(time.Second)) {
		t.Error("due before the noted expiry")
	}
	if !w.Begin(t0.Add(2 * time.Second)) {
		t.Error("not due at the noted expiry")
	}

	// One asked for while a look is under way (the look may not have seen
	// it) is kept by that look's outcome.
	w.Note(t0.Add(3 * time.Second)) // w.begin above started the look
	w.Looked(t0.Add(2*time.Second), t0.Add(time.Minute))
	if w.Begin(t0.Add(2500 * time.Millisecond)) {
		t.Error("due before the expiry noted during the look")
	}
	if !w.Begin(t0.Add(3 * time.Second)) {
		t.Error("the expiry noted during a look was lost")
	}
	// Notes before a look began are the store's to report: a later look
	// that found nothing pending does not keep them.
	w.Looked(t0.Add(3*time.Second), time.Time{})
	if w.Begin(t0.Add(4 * time.Second)) {
		t.Error("an expiry noted before the look began outlived it")
	}
}
