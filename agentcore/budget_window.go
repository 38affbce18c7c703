package agentcore

// turnStarts returns the indexes of msgs a window may start at: user
// messages before which no tool call is left without its result and every
// message is older (by seq) than every message from there on. Starting at
// one never splits a tool step from its results, and the messages before
// it are exactly those with a seq below its own (a user message moved
// behind a tool step's results, see orderToolResults, is not one).
func turnStarts(msgs []Message) []int {
	minAfter := make([]int64, len(msgs)+1)
	minAfter[len(msgs)] = 1<<63 - 1
	for i := len(msgs) - 1; i >= 0; i-- {
		minAfter[i] = min(minAfter[i+1], msgs[i].Seq)
	}
	var (
		out     []int
		open    = map[string]bool{}
		maxSeen int64
	)
	for i, m := range msgs {
		if m.Role == RoleUser && len(open) == 0 && maxSeen < minAfter[i] {
			out = append(out, i)
		}
		for _, c := range m.ToolCalls {
			open[c.ID] = true
		}
		if m.Role == RoleTool {
			delete(open, m.ToolCallID)
		}
		maxSeen = max(maxSeen, m.Seq)
	}
	return out
}

// budgetStart returns the index of msgs the window starts at so that what
// follows costs at most budget tokens, newest first, and whether the
// window lost messages to the budget. Like steppedWindow, the start moves
// in steps so the prompt's beginning holds for the provider's prompt
// cache: the tokens dropped are a multiple of budget/windowSteps, counted
// from msgs[0], so the start holds while that many tokens arrive and the
// window keeps between budget - budget/windowSteps and budget tokens (less
// by the turn it may not split). The newest turn is always kept, even when
// it alone is over the budget: a model call without the question it
// answers would be no use.
func budgetStart(msgs []Message, budget int, cost func(Message) int) (start int, cut bool) {
	pos := make([]int, len(msgs)+1)
	for i, m := range msgs {
		pos[i+1] = pos[i] + cost(m)
	}
	total := pos[len(msgs)]
	if total <= budget {
		return 0, false
	}
	starts := turnStarts(msgs)
	if len(starts) == 0 {
		return 0, false
	}
	step := max(budget/windowSteps, 1)
	need := total - max(budget, 0)
	drop := (need + step - 1) / step * step
	for _, i := range starts {
		if pos[i] >= drop {
			return i, i > 0
		}
	}
	last := starts[len(starts)-1]
	return last, last > 0
}
