package main

import (
	"bufio"
	"bytes"
	"errors"
	"flag"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestControlEndpointOnLoopbackOnly: an address that is not loopback is
// refused before anything listens.
func TestControlEndpointOnLoopbackOnly(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:8089", "[::]:0", "nonsense"} {
		var out, errOut bytes.Buffer
		err := run([]string{"-control", addr, "1:t"}, &out, &errOut, nil)
		if err == nil || out.Len() != 0 {
			t.Errorf("-control %s: err %v, printed %q", addr, err, out.String())
		}
	}
	var errOut bytes.Buffer
	if err := run([]string{"-h"}, io.Discard, &errOut, nil); !errors.Is(err, flag.ErrHelp) || !strings.Contains(errOut.String(), "usage: fakes") {
		t.Errorf("-h: %v %q", err, errOut.String())
	}
	if err := run(nil, io.Discard, io.Discard, nil); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("no token: %v", err)
	}
}

// TestPrintsURLsThenControl: the first line keeps its four URLs (scripts
// read them with `read TG LLM SL DC`); the second is the control
// endpoint, which drives the Telegram fake.
func TestPrintsURLsThenControl(t *testing.T) {
	pr, pw := io.Pipe()
	stop := make(chan os.Signal)
	done := make(chan error, 1)
	go func() { done <- run([]string{"1:t"}, pw, io.Discard, stop); _ = pw.Close() }()
	sc := bufio.NewScanner(pr)
	if !sc.Scan() {
		t.Fatal("no URL line")
	}
	urls := strings.Fields(sc.Text())
	if !sc.Scan() {
		t.Fatal("no control line")
	}
	ctl := sc.Text()
	if len(urls) != 4 || !strings.HasPrefix(ctl, "http://127.0.0.1:") {
		t.Fatalf("printed %q then %q", urls, ctl)
	}
	r, err := http.Post(ctl+"/control/send", "application/json", strings.NewReader(`{"user_id":7,"text":"hi"}`))
	if err != nil || r.StatusCode != 200 {
		t.Fatalf("control send: %v %v", err, r)
	}
	_ = r.Body.Close()
	r, err = http.Post(urls[0]+"/bot1:t/getUpdates", "application/json", strings.NewReader(`{"timeout":0}`))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if !strings.Contains(string(body), `"text":"hi"`) {
		t.Fatalf("the Telegram fake did not get the message: %s", body)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
