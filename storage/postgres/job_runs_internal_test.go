package postgres

import (
	"fmt"
	"strings"
	"testing"
)

func TestRunOwnerGoneMatchesTimeout(t *testing.T) {
	want := fmt.Sprintf("interval '%d seconds'", int(OwnerTimeout.Seconds()))
	if !strings.Contains(runOwnerGone, want) {
		t.Fatalf("runOwnerGone does not use OwnerTimeout (%s): %s", want, runOwnerGone)
	}
}
