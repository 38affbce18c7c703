package agentcore_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/storage/postgres/pgtest"
	"github.com/switchboard-chat/switchboard/tools"
)

// BenchmarkTokensPerRequest200 drives a 200-message chat (100 turns of
// about 250 tokens a message) and reports the tokens each model request
// is sent (the documented estimate): with no budget (the whole history,
// history_limit 0), with agent.context_tokens 16000 and compaction off
// (the oldest turns dropped), and with compaction on (their summary sent
// instead). Summary calls are counted apart (summary_tokens/chat).
func BenchmarkTokensPerRequest200(b *testing.B) {
	for _, mode := range []string{"unbounded", "budget", "compaction"} {
		b.Run(mode, func(b *testing.B) {
			ctx := context.Background()
			db := pgtest.Open(b, ctx)
			pad := strings.Repeat("word ", 196)
			var sent, requests, lastSent, summaryTokens, summaries int
			for n := 0; n < b.N; n++ {
				model := &summarizing{summary: func(tr string) (agentcore.Response, error) {
					return agentcore.Response{Content: "SUMMARY " + strings.Repeat("fact ", 200)}, nil
				}}
				a := &agentcore.Agent{Name: "a", Model: "m", SystemPrompt: "You help.", Provider: model,
					Tools: tools.NewRegistry(tools.RegistryOptions{}), History: db}
				if mode != "unbounded" {
					a.ContextTokens = 16000
				}
				if mode == "compaction" {
					a.Compactor = &agentcore.Compactor{Store: db}
				}
				session := fmt.Sprintf("a/bench:%s-%d", mode, n)
				for i := 1; i <= 100; i++ {
					u := agentcore.Message{Content: fmt.Sprintf("m%03d %s", i, pad), ExternalID: fmt.Sprint(i)}
					if _, err := a.Run(ctx, agentcore.RunInput{Session: session, User: &u}); err != nil {
						b.Fatal(err)
					}
					if a.Compactor != nil {
						a.Compactor.Wait() // a chat's pace: the summary lands before the next message
					}
				}
				for _, r := range model.chats() {
					sent += estimate(r)
					requests++
				}
				lastSent = estimate(model.chats()[len(model.chats())-1])
				for _, r := range model.summaryCalls() {
					summaryTokens += estimate(r)
					summaries++
				}
			}
			b.ReportMetric(float64(sent)/float64(requests), "tokens/request")
			b.ReportMetric(float64(lastSent), "tokens/last-request")
			b.ReportMetric(float64(summaries)/float64(b.N), "summaries/chat")
			b.ReportMetric(float64(summaryTokens)/float64(b.N), "summary_tokens/chat")
		})
	}
}
