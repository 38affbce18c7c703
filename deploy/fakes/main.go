// Command fakes serves local stand-ins for every outside service a chat
// daemon talks to — the Telegram Bot API (telegramtest), the scripted
// OpenAI-compatible model (llmtest), Slack's Web API with Socket Mode
// (slacktest) and Discord's REST API with its gateway (discordtest) — on
// loopback until interrupted, so that switchboard and a peer daemon can be
// measured against the same services (deploy/footprint.sh,
// docs/benchmarks.md) and anyone can try the bot without real accounts
// (docs/try-it.md). Its first output line is the four base URLs, in that
// order; the second is the URL of the Telegram fake's control endpoint
// (telegramtest's Control: send a message as a user, press a button, read
// what the bot sent), which listens on -control (default a free loopback
// port) and only ever on loopback. The Slack fake takes the bot and app
// tokens below, the Discord fake any token.
//
//	go run ./deploy/fakes 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0
//	go run ./deploy/fakes -control 127.0.0.1:8089 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0
//
// The fake model answers "echo: …" unless the message says otherwise: a
// message containing CALL_TOOL:exec {"command":"ls"} makes it call exec
// with those arguments (llmtest.Echo has the details).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
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
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, os.Interrupt, syscall.SIGTERM)
	if err := run(os.Args[1:], os.Stdout, os.Stderr, stop); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "fakes:", err)
		}
		os.Exit(2)
	}
}

// run starts the fakes, prints their URLs to out and serves until stop.
func run(args []string, out, errOut io.Writer, stop <-chan os.Signal) error {
	fs := flag.NewFlagSet("fakes", flag.ContinueOnError)
	fs.SetOutput(errOut)
	controlAddr := fs.String("control", "127.0.0.1:0", "loopback `host:port` of the Telegram fake's control endpoint")
	fs.Usage = func() {
		fmt.Fprintln(errOut, "usage: fakes [-control 127.0.0.1:PORT] TELEGRAM_BOT_TOKEN")
		fmt.Fprintln(errOut, "prints: TELEGRAM_API_URL LLM_BASE_URL SLACK_API_URL DISCORD_API_URL, then CONTROL_URL on a line of its own")
		fmt.Fprintf(errOut, "the Slack fake takes bot token %s and app token %s; the Discord fake any token\n", slackBotToken, slackAppToken)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	// A Telegram token never starts with "-": "-h" or "--help" after the
	// flags asks for the usage, not for fakes that take "-h" as their token.
	if fs.NArg() != 1 || strings.HasPrefix(fs.Arg(0), "-") {
		fs.Usage()
		return flag.ErrHelp
	}
	ln, err := listenLoopback(*controlAddr)
	if err != nil {
		return err
	}
	tg := telegramtest.NewServer(fs.Arg(0))
	defer tg.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	sl := slacktest.NewServer(slackBotToken, slackAppToken)
	defer sl.Close()
	dc := discordtest.NewServer()
	defer dc.Close()
	srv := &http.Server{Handler: tg.Control()}
	go func() { _ = srv.Serve(ln) }()
	defer srv.Close()
	fmt.Fprintln(out, tg.URL(), llm.URL(), sl.URL(), dc.URL())
	fmt.Fprintln(out, "http://"+ln.Addr().String())
	<-stop
	return nil
}

// listenLoopback listens on addr, which must name a loopback address: the
// control endpoint lets whoever reaches it speak as any Telegram user.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-control %q: want host:port, e.g. 127.0.0.1:8089", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, fmt.Errorf("-control %q: the control endpoint listens on loopback only (127.0.0.1 or ::1)", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("control endpoint: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		_ = ln.Close()
		return nil, fmt.Errorf("-control %q: it resolved to %s, not a loopback address", addr, ln.Addr())
	}
	return ln, nil
}
