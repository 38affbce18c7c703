// Command fakes serves local stand-ins for every outside service a chat
// daemon talks to — the Telegram Bot API (telegramtest), the scripted
// OpenAI-compatible model (llmtest), Slack's Web API with Socket Mode
// (slacktest) and Discord's REST API with its gateway (discordtest) — on
// loopback until interrupted, so that switchboard and a peer daemon can be
// measured against the same services (deploy/footprint.sh,
// docs/benchmarks.md). It prints the four base URLs on one line, in that
// order; the Slack fake takes the bot and app tokens below, the Discord fake
// any token.
//
//	go run ./deploy/fakes 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0
package main

import (
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
	"github.com/switchboard-chat/switchboard/channels/slack/slacktest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// The tokens the Slack fake accepts (SWITCHBOARD_SLACK_BOT_TOKEN and
// SWITCHBOARD_SLACK_APP_TOKEN).
const (
	slackBotToken = "xoxb-fakes-bot"
	slackAppToken = "xapp-fakes-app"
)

func main() {
	// A Telegram token never starts with "-": "-h" or "--help" asks for
	// the usage, not for fakes that take "-h" as their token.
	if len(os.Args) != 2 || strings.HasPrefix(os.Args[1], "-") {
		fmt.Fprintln(os.Stderr, "usage: fakes TELEGRAM_BOT_TOKEN   (prints: TELEGRAM_API_URL LLM_BASE_URL SLACK_API_URL DISCORD_API_URL)")
		fmt.Fprintf(os.Stderr, "the Slack fake takes bot token %s and app token %s; the Discord fake any token\n", slackBotToken, slackAppToken)
		os.Exit(2)
	}
	tg := telegramtest.NewServer(os.Args[1])
	defer tg.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	sl := slacktest.NewServer(slackBotToken, slackAppToken)
	defer sl.Close()
	dc := discordtest.NewServer()
	defer dc.Close()
	fmt.Println(tg.URL(), llm.URL(), sl.URL(), dc.URL())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
}
