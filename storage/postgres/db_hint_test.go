package postgres_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/storage/postgres"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
)

// TestPingSaysHowToCreateWhatIsMissing: a server that answers but has no
// such database or role gets a hint to create it, with the command, not
// "is it running?".
func TestPingSaysHowToCreateWhatIsMissing(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	base, err := url.Parse(pgtest.New(t)) // the server is up (or the test skips)
	if err != nil {
		t.Fatal(err)
	}
	noDB := *base
	noDB.Path = "/sb_no_such_database"
	noRole := *base
	noRole.User = url.UserPassword("sb_no_such_role", "pw-secret-789")
	for _, c := range []struct {
		name string
		url  url.URL
		want []string
	}{
		{"database", noDB, []string{`database "sb_no_such_database" does not exist`,
			"createdb -h " + base.Hostname() + " -p " + base.Port() + " -O " + base.User.Username() + " sb_no_such_database",
			`CREATE DATABASE "sb_no_such_database" OWNER "` + base.User.Username() + `"`, "leave database.url empty"}},
		{"role", noRole, []string{`role "sb_no_such_role" does not exist`,
			"createuser -h " + base.Hostname() + " -p " + base.Port() + " --login --pwprompt sb_no_such_role",
			`CREATE ROLE "sb_no_such_role" LOGIN`, "leave database.url empty"}},
	} {
		db, err := postgres.Open(ctx, c.url.String(), postgres.Options{})
		if err != nil {
			t.Fatalf("%s: Open: %v", c.name, err)
		}
		err = db.Ping(ctx)
		db.Close()
		if err == nil {
			t.Fatalf("%s: Ping succeeded", c.name)
		}
		msg := err.Error()
		for _, want := range c.want {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: error %q lacks %q", c.name, msg, want)
			}
		}
		if strings.Contains(msg, "is it running") || strings.Contains(msg, "pw-secret-789") {
			t.Errorf("%s: error %q asks whether a server that answered runs, or shows the password", c.name, msg)
		}
	}
}
