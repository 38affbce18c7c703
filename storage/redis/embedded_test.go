package redis_test

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"
	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
)

func startFor(t *testing.T, dir string) (*sbredis.Embedded, error) {
	t.Helper()
	e, err := sbredis.StartEmbeddedFor(sbredis.EmbeddedOptions{DataDir: dir})
	if err == nil {
		t.Cleanup(e.Close)
	}
	return e, err
}

func TestStartEmbeddedForNeedsThePassword(t *testing.T) {
	e, err := startFor(t, t.TempDir())
	if err != nil {
		t.Fatalf("StartEmbeddedFor: %v", err)
	}
	u, err := url.Parse(e.URL())
	if err != nil {
		t.Fatal(err)
	}
	pw, _ := u.User.Password()
	if u.Hostname() != "127.0.0.1" || len(pw) < 32 {
		t.Fatalf("URL host %q, password of %d characters; want loopback and a long random password", u.Hostname(), len(pw))
	}

	// The daemon's way in works.
	s := openStore(t, e.URL(), "")
	if _, err := s.FirstSeen(testContext(t), "k", time.Minute); err != nil {
		t.Fatalf("FirstSeen with the password: %v", err)
	}

	// Anyone else on the machine is turned away.
	for name, pass := range map[string]string{"no password": "", "wrong password": "not-" + pw} {
		c := goredis.NewClient(&goredis.Options{Addr: u.Host, Password: pass, MaxRetries: -1})
		err := c.Set(testContext(t), "intruder", "x", 0).Err()
		_ = c.Close()
		if err == nil || !(strings.Contains(err.Error(), "NOAUTH") || strings.Contains(err.Error(), "WRONGPASS")) {
			t.Errorf("%s: SET = %v; want the connection refused (NOAUTH/WRONGPASS)", name, err)
		}
	}
	if strings.Contains(fmt.Sprint(e), pw) {
		t.Error("printing the Embedded shows the password")
	}
}

func TestStartEmbeddedForRefusesASecondServerOnTheDataDir(t *testing.T) {
	dir := t.TempDir()
	first, err := startFor(t, dir)
	if err != nil {
		t.Fatalf("StartEmbeddedFor: %v", err)
	}
	_, err = startFor(t, dir)
	var inUse *sbredis.EmbeddedInUseError
	if !errors.As(err, &inUse) || inUse.PID != os.Getpid() {
		t.Fatalf("second StartEmbeddedFor = %v; want an EmbeddedInUseError naming pid %d", err, os.Getpid())
	}
	for _, want := range []string{dir, fmt.Sprintf("already served by another switchboard process (pid %d)", os.Getpid()), "stop it or configure redis.url"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}

	// Another data_dir is independent; once the first closes, the directory is free.
	if _, err := startFor(t, t.TempDir()); err != nil {
		t.Errorf("StartEmbeddedFor on another data_dir: %v", err)
	}
	first.Close()
	if _, err := startFor(t, dir); err != nil {
		t.Errorf("StartEmbeddedFor after the first closed: %v", err)
	}
}
