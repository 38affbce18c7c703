package bot

import (
	"context"
	"fmt"

	"github.com/switchboard-chat/switchboard/channels"
)

// PressHandler decides a press on one of a feature's buttons: id names the
// feature's record, choice is the button's letter. It answers the press
// (AnswerPress), so the client stops spinning.
type PressHandler func(ctx context.Context, in channels.Inbound, id, choice string)

// HandlePresses routes presses on buttons of kind (two lower-case letters,
// the start of their data "<kind>:<id>:<choice>") to h. Call it after
// NewRouter and before the first Handle: presses are routed without a
// lock. A kind taken already is refused, so a feature cannot take
// another's buttons.
func (r *Router) HandlePresses(kind string, h PressHandler) error {
	if !validKind(kind) || h == nil {
		return fmt.Errorf("handle presses of %q: the kind is two lower-case letters, with a handler", kind)
	}
	if _, taken := r.presses[kind]; taken {
		return fmt.Errorf("handle presses of %q: the kind is taken", kind)
	}
	if r.presses == nil {
		r.presses = map[string]PressHandler{}
	}
	r.presses[kind] = h
	return nil
}

// handlePress routes a button press to the feature that owns the button.
// Every press is answered, so the client stops spinning; malformed or
// forged data changes nothing.
func (r *Router) handlePress(ctx context.Context, in channels.Inbound) {
	kind, id, choice, ok := parseButton(in.Press.Data, func(kind string) bool { return r.presses[kind] != nil })
	if !ok {
		r.log.Info("press on unknown button", "user", in.Identity())
		r.AnswerPress(ctx, in, "This button is no longer active.")
		return
	}
	r.presses[kind](ctx, in, id, choice)
}
