package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// Datetime tells the model the current date and time, optionally in a
// given IANA time zone.
type Datetime struct {
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
}

// Name implements Tool.
func (Datetime) Name() string { return "datetime" }

// Description implements Tool.
func (Datetime) Description() string {
	return "Get the current date and time. Optionally pass an IANA time zone such as Europe/Berlin."
}

// Parameters implements Tool.
func (Datetime) Parameters() json.RawMessage {
	return json.RawMessage(`{"type":"object","properties":{"timezone":{"type":"string","description":"IANA time zone, e.g. Asia/Ho_Chi_Minh; default UTC"}},"additionalProperties":false}`)
}

// SideEffect implements Tool.
func (Datetime) SideEffect() SideEffect { return SideEffectNone }

// Execute implements Tool.
func (d Datetime) Execute(_ context.Context, args json.RawMessage) Result {
	var in struct {
		Timezone string `json:"timezone"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return ErrorResult("arguments must be a JSON object like {\"timezone\":\"UTC\"}")
	}
	now := time.Now
	if d.Now != nil {
		now = d.Now
	}
	loc := time.UTC
	if in.Timezone != "" {
		l, err := time.LoadLocation(in.Timezone)
		if err != nil {
			return ErrorResult(fmt.Sprintf("unknown time zone %q; use an IANA name like Europe/Berlin", in.Timezone))
		}
		loc = l
	}
	t := now().In(loc)
	return Result{ForLLM: fmt.Sprintf("%s (%s, %s)", t.Format(time.RFC3339), t.Weekday(), loc)}
}
