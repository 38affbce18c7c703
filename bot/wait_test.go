package bot

import "github.com/switchboard-chat/switchboard/channels/channeltest"

// waitUntil polls cond until it holds, failing the test after 10 s.
var waitUntil = channeltest.WaitUntil

// WaitUntil is waitUntil for the external test package.
var WaitUntil = waitUntil
