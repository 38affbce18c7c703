package telegramtest

import "regexp"

// BotUsername is the fake bot's username, as getMe returns it: a group
// message mentions the bot with "@" + BotUsername.
const BotUsername = "switchboard_test_bot"

// Entity is a message entity of an incoming message. Offset and Length
// count UTF-16 code units, as in the Bot API.
type Entity struct {
	Type   string // "mention", "text_mention", "bot_command"...
	Offset int
	Length int
	UserID int64 // the user a text_mention names
}

// entityPatterns find what Telegram marks by itself in a message's text:
// @username mentions anywhere and a /command at the start.
var (
	mentionPattern = regexp.MustCompile(`@[A-Za-z0-9_]{5,32}`)
	leadingCommand = regexp.MustCompile(`^/[A-Za-z0-9_]{1,32}(@[A-Za-z0-9_]{5,32})?`)
)

// derivedEntities returns the entities Telegram would attach to text:
// its leading bot command and its @username mentions.
func derivedEntities(text string) []Entity {
	var out []Entity
	if loc := leadingCommand.FindStringIndex(text); loc != nil {
		out = append(out, Entity{Type: "bot_command", Offset: 0, Length: utf16Len(text[:loc[1]])})
	}
	for _, loc := range mentionPattern.FindAllStringIndex(text, -1) {
		if loc[0] > 0 && (text[loc[0]-1] != ' ' && text[loc[0]-1] != '\n') {
			continue // part of a word or of the command's @bot
		}
		out = append(out, Entity{Type: "mention", Offset: utf16Len(text[:loc[0]]), Length: utf16Len(text[loc[0]:loc[1]])})
	}
	return out
}

// entitiesJSONLocked renders entities as the Bot API sends them.
func (s *Server) entitiesJSONLocked(entities []Entity) []map[string]any {
	out := make([]map[string]any, 0, len(entities))
	for _, e := range entities {
		j := map[string]any{"type": e.Type, "offset": e.Offset, "length": e.Length}
		if e.UserID != 0 {
			name := s.users[e.UserID]
			if name == "" {
				name = "User"
			}
			j["user"] = map[string]any{"id": e.UserID, "is_bot": e.UserID == s.botID, "first_name": name}
		}
		out = append(out, j)
	}
	return out
}
