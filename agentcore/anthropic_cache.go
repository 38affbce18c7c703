package agentcore

import "github.com/anthropics/anthropic-sdk-go/v2"

// anthropicMaxBreakpoints is how many cache_control breakpoints one
// Messages API request may carry.
const anthropicMaxBreakpoints = 4

// markCachePrefix puts ephemeral cache_control breakpoints on the stable
// prefix of params, which the API reads in the order tools, system,
// messages:
//
//   - the last tool definition, so the tools stay cached when the system
//     prompt changes (a context file written in the previous run);
//   - the last system block;
//   - the last block of the user turn that ended the previous call of the
//     conversation (the turn before the newest assistant turn), which that
//     call wrote to the cache: this call reads it however many blocks the
//     newest turns added (the API looks back only 20 blocks from a
//     breakpoint);
//   - the last block of the newest turn, which writes the whole request
//     for the next call to read.
//
// That is at most anthropicMaxBreakpoints. A breakpoint is no part of the
// cached content, so the one that moves from the newest turn to the earlier
// history on the next call still finds what it wrote. A prefix shorter than
// the model's minimum is simply not cached.
func markCachePrefix(params *anthropic.MessageNewParams) {
	if n := len(params.Tools); n > 0 {
		if cc := params.Tools[n-1].GetCacheControl(); cc != nil {
			*cc = anthropic.NewCacheControlEphemeralParam()
		}
	}
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = anthropic.NewCacheControlEphemeralParam()
	}
	n := len(params.Messages)
	markTurn(params.Messages, n-3)
	markTurn(params.Messages, n-1)
}

// markTurn puts a breakpoint on the last content block of turns[i], when
// there is such a turn.
func markTurn(turns []anthropic.MessageParam, i int) {
	if i < 0 || i >= len(turns) {
		return
	}
	var blocks []anthropic.ContentBlockParamUnion
	switch t := turns[i]; {
	case t.OfUser != nil:
		blocks = t.OfUser.Content
	case t.OfAssistant != nil:
		blocks = t.OfAssistant.Content
	}
	if len(blocks) == 0 {
		return
	}
	if cc := blocks[len(blocks)-1].GetCacheControl(); cc != nil {
		*cc = anthropic.NewCacheControlEphemeralParam()
	}
}
