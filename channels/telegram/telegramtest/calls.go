package telegramtest

import (
	"regexp"
	"slices"
)

// callbackQuery is a button press the bot has to answer.
type callbackQuery struct {
	id       string
	answered bool
}

// CallbackAnswer is the bot's answer to a button press.
type CallbackAnswer struct {
	ID        string // the callback query id
	Text      string
	ShowAlert bool
	URL       string
}

// ChatAction is a chat action the bot sent, such as "typing".
type ChatAction struct {
	Action   string
	ThreadID int
}

// Command is a bot command registered with setMyCommands.
type Command struct {
	Command     string `json:"command"`
	Description string `json:"description"`
}

// CallbackAnswers returns the bot's answers to button presses, oldest first.
func (s *Server) CallbackAnswers() []CallbackAnswer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.answers)
}

// ChatActions returns the chat actions the bot sent to chatID, oldest first.
func (s *Server) ChatActions(chatID int64) []ChatAction {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.chats[chatID]; c != nil {
		return slices.Clone(c.actions)
	}
	return nil
}

// Commands returns the commands last registered with setMyCommands.
func (s *Server) Commands() []Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.commands)
}

const errQueryTooOld = "query is too old and response timeout expired or query ID is invalid"

func (s *Server) answerCallbackQuery(p params) (any, *apiError) {
	id := p["callback_query_id"]
	s.mu.Lock()
	defer s.mu.Unlock()
	q := s.callbacks[id]
	if q == nil || q.answered {
		return nil, badRequest(errQueryTooOld)
	}
	if utf16Len(p["text"]) > 200 {
		return nil, badRequest("MESSAGE_TOO_LONG")
	}
	q.answered = true
	s.answers = append(s.answers, CallbackAnswer{ID: id, Text: p["text"], ShowAlert: p.bool("show_alert"), URL: p["url"]})
	s.notifyLocked()
	return true, nil
}

var chatActions = map[string]bool{
	"typing": true, "upload_photo": true, "record_video": true, "upload_video": true,
	"record_voice": true, "upload_voice": true, "upload_document": true, "choose_sticker": true,
	"find_location": true, "record_video_note": true, "upload_video_note": true,
}

func (s *Server) sendChatAction(p params) (any, *apiError) {
	chatID, err := p.chatID()
	if err != nil {
		return nil, err
	}
	thread, err := p.int("message_thread_id")
	if err != nil {
		return nil, err
	}
	action := p["action"]
	if !chatActions[action] {
		return nil, badRequest("wrong parameter action in request")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chatLocked(chatID)
	c.actions = append(c.actions, ChatAction{Action: action, ThreadID: thread})
	s.notifyLocked()
	return true, nil
}

var commandPattern = regexp.MustCompile(`^[a-z0-9_]{1,32}$`)

func (s *Server) setMyCommands(p params) (any, *apiError) {
	var cmds []Command
	if err := p.json("commands", &cmds); err != nil {
		return nil, err
	}
	if len(cmds) > 100 {
		return nil, badRequest("too many commands")
	}
	for _, c := range cmds {
		if !commandPattern.MatchString(c.Command) {
			return nil, badRequest("BOT_COMMAND_INVALID")
		}
		if n := utf16Len(c.Description); n < 1 || n > 256 {
			return nil, badRequest("BOT_COMMAND_DESCRIPTION_INVALID")
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = cmds
	s.notifyLocked()
	return true, nil
}

func (s *Server) getMyCommands(params) (any, *apiError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.commands == nil {
		return []Command{}, nil
	}
	return slices.Clone(s.commands), nil
}

// Topic is a forum topic the bot created.
type Topic struct {
	ChatID   int64
	ThreadID int
	Name     string
}

// createForumTopic creates a topic in a forum supergroup (a chat the
// fake has seen a topic message in, or any group with a negative id).
func (s *Server) createForumTopic(p params) (any, *apiError) {
	chatID, err := p.chatID()
	if err != nil {
		return nil, err
	}
	name := p["name"]
	if n := utf16Len(name); n < 1 || n > 128 {
		return nil, badRequest("TOPIC_NAME_INVALID")
	}
	if chatID > 0 {
		return nil, badRequest("the chat is not a forum")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chatLocked(chatID)
	c.forum = true
	c.nextID++
	t := Topic{ChatID: chatID, ThreadID: 1000 + c.nextID, Name: name}
	s.topics = append(s.topics, t)
	s.notifyLocked()
	return map[string]any{"message_thread_id": t.ThreadID, "name": name, "icon_color": 7322096}, nil
}

// Topics returns the forum topics the bot created, oldest first.
func (s *Server) Topics() []Topic {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Topic(nil), s.topics...)
}
