package redact

import (
	"errors"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	got := URL("postgres://u:hunter2@db:5432/x?sslmode=require&password=hunter3")
	if strings.Contains(got, "hunter2") || strings.Contains(got, "hunter3") || !strings.Contains(got, "u:xxxxx@db:5432") {
		t.Errorf("URL = %q", got)
	}
	err := Error(errors.New("bad hunter2\n\tline two"), "hunter2")
	if err.Error() != "bad xxxxx; line two" {
		t.Errorf("Error = %q", err)
	}
}
