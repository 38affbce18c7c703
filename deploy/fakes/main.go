// Command fakes serves the Telegram Bot API fake (telegramtest) and the
// scripted OpenAI-compatible model (llmtest) on loopback until interrupted,
// so that switchboard and a peer daemon can be measured against the same
// local services (deploy/footprint.sh, docs/benchmarks.md). It prints the
// two base URLs on one line.
//
//	go run ./deploy/fakes 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: fakes BOT_TOKEN   (prints: TELEGRAM_API_URL LLM_BASE_URL)")
		os.Exit(2)
	}
	tg := telegramtest.NewServer(os.Args[1])
	defer tg.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	fmt.Println(tg.URL(), llm.URL())
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	<-stop
}
