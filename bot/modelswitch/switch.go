package modelswitch

import (
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/switchboard-chat/switchboard/agentcore"
	"github.com/switchboard-chat/switchboard/bot"
	"github.com/switchboard-chat/switchboard/channels"
)

// Model is one model a chat may be switched to (an entry of models:).
type Model struct {
	Name     string             // what /model NAME calls it
	Model    string             // its id on its server
	Vision   bool               // it reads images
	Provider agentcore.Provider // reaches it, with retries and fallbacks
}

// Store keeps each chat's choice; chat is platform:chat_id.
type Store interface {
	// ChatModel returns the name chat was switched to, "" when none.
	ChatModel(ctx context.Context, chat string) (string, error)
	// SetChatModel switches chat to name ("" back to the default),
	// audited as done by actor.
	SetChatModel(ctx context.Context, chat, name, actor string) error
}

// Switch answers /model and tells the Router each run's model.
type Switch struct {
	models       []Model
	defaultModel string // the default agent's model id, for /model
	store        Store
	log          *slog.Logger
}

var _ bot.ModelChooser = (*Switch)(nil)

// New builds a Switch among models; defaultModel is the model id runs use
// without a switch, shown by /model.
func New(models []Model, defaultModel string, store Store, log *slog.Logger) *Switch {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Switch{models: models, defaultModel: defaultModel, store: store, log: log}
}

// chatKey is the chat a choice belongs to: every thread of a chat shares it.
func chatKey(a channels.Address) string { return a.Platform + ":" + a.ChatID }

// find returns the model called name.
func (s *Switch) find(name string) (Model, bool) {
	i := slices.IndexFunc(s.models, func(m Model) bool { return m.Name == name })
	if i < 0 {
		return Model{}, false
	}
	return s.models[i], true
}

// current returns the model chat was switched to; ok is false for the
// default, including a choice no longer configured. Without models: there
// is nothing to switch to, and nothing is read.
func (s *Switch) current(ctx context.Context, chat string) (Model, bool, error) {
	if len(s.models) == 0 {
		return Model{}, false, nil
	}
	name, err := s.store.ChatModel(ctx, chat)
	if err != nil || name == "" {
		return Model{}, false, err
	}
	m, ok := s.find(name)
	if !ok {
		s.log.Warn("chat switched to a model no longer in models; the default answers", "chat", chat, "model", name)
	}
	return m, ok, nil
}

// ModelFor implements bot.ModelChooser: one small query per run.
func (s *Switch) ModelFor(ctx context.Context, chat channels.Address) (*agentcore.ModelChoice, error) {
	m, ok, err := s.current(ctx, chatKey(chat))
	if err != nil {
		return nil, fmt.Errorf("chat model: %w", err)
	}
	if !ok {
		return nil, nil
	}
	return &agentcore.ModelChoice{Provider: m.Provider, Model: m.Model, Vision: m.Vision}, nil
}

// Describe is the chat's model as /model and /status show it.
func (s *Switch) Describe(ctx context.Context, chat channels.Address) (string, error) {
	m, ok, err := s.current(ctx, chatKey(chat))
	if err != nil {
		return "", err
	}
	if !ok {
		return fmt.Sprintf("default: %s (default)", s.defaultModel), nil
	}
	return fmt.Sprintf("%s: %s", m.Name, m.Model), nil
}
