package main

import (
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/discord/discordtest"
)

const discordToken = "MTEwMDAwMDAwMDAwMDAwMDAwMQ.e2e-discord-token-value.abcdefghijklmnop"

func discordButton(t *testing.T, m discordtest.Message, label string) string {
	t.Helper()
	for _, row := range m.Buttons {
		for _, b := range row {
			if b.Label == label {
				return b.CustomID
			}
		}
	}
	t.Fatalf("no %q button on %q", label, m.Content)
	return ""
}

func TestE2EDiscordAccessExecAndSplit(t *testing.T) {
	ctx := testCtx(t, 90*time.Second)
	dc := discordtest.NewServer()
	defer dc.Close()
	llm := llmtest.NewServer()
	defer llm.Close()
	addr := freeAddr(t)
	env := externalEnv(t, nil, llm, addr)
	withDiscord(env, dc)
	env["SWITCHBOARD_ACCESS_MODE"] = "request"
	env["SWITCHBOARD_ADMINS"] = "discord:700000000000000001"
	d := startDaemon(t, t.TempDir(), addr, env)
	d.waitReady(ctx)
	const boss, newbie = "700000000000000001", "700000000000000002"
	dc.AddUser(boss, "boss") // shares a server with the bot, never wrote to it

	// A stranger writes in a server channel, mentioning the bot.
	dc.SendMessage("800000000000000001", "900000000000000001", newbie, "newbie", "<@"+discordtest.BotID+"> hi there")
	var adminDM string
	eventually(ctx, t, "the access request in the admin's DMs", func() bool {
		adminDM = dc.DMChannel(boss)
		return adminDM != "" && len(dc.Messages(adminDM)) >= 1
	})
	req := dc.Messages(adminDM)[0]
	if !strings.Contains(req.Content, "discord:"+newbie) {
		t.Fatalf("access request = %q", req.Content)
	}
	approve := discordButton(t, req, "Approve")
	dc.PressButton(adminDM, req.ID, newbie, approve) // forged: refused
	eventually(ctx, t, "the refusal shown to the presser", func() bool {
		for _, f := range dc.Followups() {
			if strings.Contains(f.Content, "may not decide") && f.Flags&64 != 0 {
				return true
			}
		}
		return false
	})
	dc.PressButton(adminDM, req.ID, boss, approve)
	eventually(ctx, t, "the user told they are in", func() bool {
		for _, m := range dc.Messages("800000000000000001") {
			if strings.Contains(m.Content, "let you in") {
				return true
			}
		}
		return false
	})
	// The agent's answers reply to the message that asked.
	askID := dc.SendMessage("800000000000000001", "900000000000000001", newbie, "newbie", "<@"+discordtest.BotID+"> ping")
	eventually(ctx, t, "the reply to the asking message", func() bool {
		for _, m := range dc.Messages("800000000000000001") {
			if strings.Contains(m.Content, "echo: ping") {
				if m.ReplyTo != askID {
					t.Fatalf("reply references %q, want the asking message %q", m.ReplyTo, askID)
				}
				return true
			}
		}
		return false
	})
	eventually(ctx, t, "the request edited without buttons", func() bool {
		m := dc.Messages(adminDM)[0]
		return m.Edits > 0 && len(m.Buttons) == 0 && strings.Contains(m.Content, "Approved")
	})

	// An exec approval decided by button.
	dc.SendMessage("800000000000000001", "900000000000000001", newbie, "newbie",
		`<@`+discordtest.BotID+`> CALL_TOOL:exec {"command":"echo from-discord"}`)
	eventually(ctx, t, "the approval request", func() bool { return len(dc.Messages(adminDM)) >= 2 })
	ap := dc.Messages(adminDM)[1]
	if !strings.Contains(ap.Content, "echo from-discord") {
		t.Fatalf("approval request = %q", ap.Content)
	}
	dc.PressButton(adminDM, ap.ID, boss, discordButton(t, ap, "Allow once"))
	eventually(ctx, t, "the command output in the channel", func() bool {
		for _, m := range dc.Messages("800000000000000001") {
			if strings.Contains(m.Content, "tool exec said: from-discord") {
				return true
			}
		}
		return false
	})

	// A long reply is split at 2000 characters without breaking code.
	long := "SAY: " + strings.Repeat("lorem ipsum ", 300) + "\n```\n" + strings.Repeat("line of code\n", 200) + "```"
	before := len(dc.Messages("800000000000000001"))
	dc.SendMessage("800000000000000001", "900000000000000001", newbie, "newbie", "<@"+discordtest.BotID+"> "+long)
	eventually(ctx, t, "a reply in several parts", func() bool { return len(dc.Messages("800000000000000001")) >= before+3 })
	for _, m := range dc.Messages("800000000000000001")[before:] {
		if len([]rune(m.Content)) > 2000 || strings.Count(m.Content, "```")%2 != 0 {
			t.Fatalf("part of %d runes with %d fences", len([]rune(m.Content)), strings.Count(m.Content, "```"))
		}
		if m.AllowedMentions == nil || len(m.AllowedMentions.Parse) != 0 {
			t.Fatalf("message sent without an empty allowed_mentions: %+v", m.AllowedMentions)
		}
	}
}
