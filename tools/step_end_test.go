package tools_test

import (
	"context"
	"slices"
	"testing"

	"github.com/switchboard-chat/switchboard/tools"
)

func TestAtStepEnd(t *testing.T) {
	var got []string
	record := func(s string) func(context.Context) { return func(context.Context) { got = append(got, s) } }

	tools.AtStepEnd(context.Background(), record("no step: at once"))
	if !slices.Equal(got, []string{"no step: at once"}) {
		t.Fatalf("outside a step: %q", got)
	}

	got = nil
	ctx, end := tools.WithStepEnd(context.Background())
	tools.AtStepEnd(ctx, record("first"))
	got = append(got, "call 2 runs")
	tools.AtStepEnd(ctx, record("second"))
	if !slices.Equal(got, []string{"call 2 runs"}) {
		t.Fatalf("before the step ends: %q", got)
	}
	end(context.Background())
	end(context.Background()) // a second end runs nothing again
	if want := []string{"call 2 runs", "first", "second"}; !slices.Equal(got, want) {
		t.Fatalf("after the step: %q, want %q", got, want)
	}
}
