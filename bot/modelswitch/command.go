package modelswitch

import (
	"context"
	"strings"

	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// refused is the answer to a non-admin's switch.
const refused = "Only admins can switch the model; ask one of them."

// Commands returns /model, answered by s.
func Commands(s *Switch) []bot.Command {
	return []bot.Command{{
		Name: "model",
		Help: "show this chat's model; admins: /model NAME switches it, /model default goes back",
		Run:  s.run,
	}}
}

// run answers "/model [NAME|default]".
func (s *Switch) run(ctx context.Context, host bot.Host, in channels.Inbound, args string) string {
	chat := chatKey(in.Address())
	if args == "" {
		d, err := s.Describe(ctx, in.Address())
		if err != nil {
			s.log.Error("/model could not read the chat's model", "chat", chat, "error", err)
			return "Could not read this chat's model; try again."
		}
		return "Model: " + d + s.choices()
	}
	actor := in.Identity()
	if !host.IsAdmin(actor) {
		return refused
	}
	name := strings.Fields(args)[0]
	if name == "default" {
		name = ""
	} else if _, ok := s.find(name); !ok {
		return "No model is called " + name + "." + s.choices()
	}
	if err := s.store.SetChatModel(ctx, chat, name, actor); err != nil {
		s.log.Error("/model could not switch the chat", "chat", chat, "model", name, "error", err)
		return "Could not switch the model; try again."
	}
	s.log.Info("chat model switched", "chat", chat, "model", cmpDefault(name), "by", actor)
	d, err := s.Describe(ctx, in.Address())
	if err != nil {
		return "Switched."
	}
	return "Model: " + d
}

// choices lists the names /model takes.
func (s *Switch) choices() string {
	names := []string{"default"}
	for _, m := range s.models {
		names = append(names, m.Name)
	}
	return "\nModels: " + strings.Join(names, ", ")
}

// cmpDefault names the default choice "default" in logs.
func cmpDefault(name string) string {
	if name == "" {
		return "default"
	}
	return name
}
