package jobs_test

import (
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// oneAgent finds the default agent alone, as a Router given no other
// agents does.
type oneAgent struct{ run bot.Runner }

func (a oneAgent) Agent(name string) (string, bot.Runner, bool) {
	if name == "" || name == "default" {
		return "default", a.run, a.run != nil
	}
	return name, nil, false
}

// recorder is a channel that records what is sent to it.
type recorder = channeltest.Recorder

func newRecorder() *recorder { return channeltest.NewRecorder() }

// waitUntil polls cond until it holds, failing the test after 10 s.
var waitUntil = channeltest.WaitUntil
