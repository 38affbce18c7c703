package telegramtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

const token = "4242:test-token"

func newBot(t *testing.T, s *telegramtest.Server, opts ...bot.Option) *bot.Bot {
	t.Helper()
	b, err := bot.New(token, append([]bot.Option{bot.WithServerURL(s.URL())}, opts...)...)
	if err != nil {
		t.Fatalf("bot.New: %v", err)
	}
	return b
}

func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// call posts a JSON body to method and decodes the Bot API response.
func call(t *testing.T, s *telegramtest.Server, tok, method string, body any) (status int, resp apiResponse) {
	t.Helper()
	raw, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.Post(s.URL()+"/bot"+tok+"/"+method, "application/json", strings.NewReader(string(raw)))
	if err != nil {
		t.Fatalf("POST %s: %v", method, err)
	}
	defer r.Body.Close()
	if err := json.NewDecoder(r.Body).Decode(&resp); err != nil {
		t.Fatalf("decode %s response: %v", method, err)
	}
	return r.StatusCode, resp
}

type apiResponse struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

func updateIDs(t *testing.T, resp apiResponse) []int64 {
	t.Helper()
	var ups []struct {
		ID int64 `json:"update_id"`
	}
	if err := json.Unmarshal(resp.Result, &ups); err != nil {
		t.Fatalf("decode updates %s: %v", resp.Result, err)
	}
	ids := []int64{}
	for _, u := range ups {
		ids = append(ids, u.ID)
	}
	return ids
}

func TestGetMeAndWrongToken(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s)
	me, err := b.GetMe(testContext(t))
	if err != nil {
		t.Fatalf("GetMe: %v", err)
	}
	if me.ID != 4242 || !me.IsBot || me.Username == "" {
		t.Errorf("GetMe = %+v, want bot 4242 with a username", me)
	}

	_, err = bot.New("4242:wrong", bot.WithServerURL(s.URL()))
	if !errors.Is(err, bot.ErrorUnauthorized) {
		t.Errorf("bot.New with a wrong token: err = %v, want Unauthorized", err)
	}
	status, resp := call(t, s, "4242:wrong", "getMe", nil)
	if status != 401 || resp.OK || resp.ErrorCode != 401 || resp.Description != "Unauthorized" {
		t.Errorf("wrong token: %d %+v", status, resp)
	}
	if got := s.Requests("getMe"); got != 4 {
		t.Errorf("Requests(getMe) = %d, want 4", got)
	}
}

func TestUnknownMethodIsNotFound(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	status, resp := call(t, s, token, "sendTelepathy", map[string]any{"chat_id": 1})
	if status != 404 || resp.OK || resp.ErrorCode != 404 {
		t.Errorf("unknown method: %d %+v", status, resp)
	}
}

func TestGetUpdatesOffsetSemantics(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	u1 := s.SendText(10, 10, "Ann", "one")
	u2 := s.SendText(10, 10, "Ann", "two")
	u3 := s.SendText(10, 10, "Ann", "three")

	_, resp := call(t, s, token, "getUpdates", map[string]any{"timeout": 0})
	if got := updateIDs(t, resp); !slices.Equal(got, []int64{u1, u2, u3}) {
		t.Fatalf("first getUpdates = %v", got)
	}
	_, resp = call(t, s, token, "getUpdates", map[string]any{"timeout": 0})
	if got := updateIDs(t, resp); !slices.Equal(got, []int64{u1, u2, u3}) {
		t.Fatalf("unconfirmed updates not redelivered: %v", got)
	}
	_, resp = call(t, s, token, "getUpdates", map[string]any{"offset": u2, "limit": 1})
	if got := updateIDs(t, resp); !slices.Equal(got, []int64{u2}) {
		t.Fatalf("offset %d limit 1 = %v, want [%d]", u2, got, u2)
	}
	if got := s.Pending(); !slices.Equal(got, []int64{u2, u3}) {
		t.Fatalf("Pending after offset %d = %v", u2, got)
	}
	_, resp = call(t, s, token, "getUpdates", map[string]any{"offset": u3 + 1})
	if got := updateIDs(t, resp); len(got) != 0 {
		t.Fatalf("after confirming all: %v", got)
	}
	if got := s.Pending(); len(got) != 0 {
		t.Fatalf("Pending after confirming all = %v", got)
	}

	if err := s.Redeliver(u2); err != nil {
		t.Fatal(err)
	}
	_, resp = call(t, s, token, "getUpdates", map[string]any{"offset": u3 + 1})
	if got := updateIDs(t, resp); !slices.Equal(got, []int64{u2}) {
		t.Fatalf("redelivered = %v, want [%d]", got, u2)
	}
	if err := s.Redeliver(999); err == nil {
		t.Error("Redeliver of an unknown update succeeded")
	}
}

func TestGetUpdatesLongPollWaitsForUpdate(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	ctx := testContext(t)
	done := make(chan []int64, 1)
	go func() {
		_, resp := call(t, s, token, "getUpdates", map[string]any{"timeout": 10})
		done <- updateIDs(t, resp)
	}()
	if err := s.WaitRequests(ctx, "getUpdates", 1); err != nil {
		t.Fatal(err)
	}
	id := s.SendText(5, 5, "Bo", "hello")
	select {
	case got := <-done:
		if !slices.Equal(got, []int64{id}) {
			t.Errorf("long poll returned %v, want [%d]", got, id)
		}
	case <-ctx.Done():
		t.Fatal("long poll did not return the update")
	}
}

func TestNewerGetUpdatesEndsOlderWithConflict(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	ctx := testContext(t)
	first := make(chan int, 1)
	go func() {
		status, _ := call(t, s, token, "getUpdates", map[string]any{"timeout": 10})
		first <- status
	}()
	// The older call must be polling (not merely received) before the newer.
	for s.LongPolls() < 1 {
		select {
		case <-ctx.Done():
			t.Fatal("the first getUpdates never began polling")
		case <-time.After(time.Millisecond):
		}
	}
	status, _ := call(t, s, token, "getUpdates", map[string]any{"timeout": 0})
	if status != 200 {
		t.Errorf("newer getUpdates status %d", status)
	}
	if got := <-first; got != http.StatusConflict {
		t.Errorf("older getUpdates status %d, want 409", got)
	}
}

func TestBotReceivesMessagesAndPresses(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	var mu sync.Mutex
	var got []*models.Update
	seen := make(chan struct{}, 10)
	b := newBot(t, s, bot.WithHTTPClient(2*time.Second, &http.Client{Timeout: 5 * time.Second}),
		bot.WithDefaultHandler(func(_ context.Context, _ *bot.Bot, u *models.Update) {
			mu.Lock()
			got = append(got, u)
			mu.Unlock()
			seen <- struct{}{}
		}))
	ctx, cancel := context.WithCancel(testContext(t))
	stopped := make(chan struct{})
	go func() { b.Start(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	s.SendTextInChat(-100, 7, 11, "Cy", "in a topic")
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: -100, Text: "pick",
		ReplyMarkup: &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "A", CallbackData: "a"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	s.PressButton(-100, 11, sent.ID, "a")
	for range 2 {
		select {
		case <-seen:
		case <-ctx.Done():
			t.Fatal("updates not delivered")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// The library runs handlers concurrently: order by update id.
	slices.SortFunc(got, func(a, b *models.Update) int { return int(a.ID - b.ID) })
	msg := got[0].Message
	if msg == nil || msg.Text != "in a topic" || msg.Chat.ID != -100 || msg.Chat.Type != "supergroup" ||
		msg.MessageThreadID != 7 || !msg.IsTopicMessage || msg.From.ID != 11 || msg.From.FirstName != "Cy" {
		t.Errorf("message update = %+v", msg)
	}
	cq := got[1].CallbackQuery
	if cq == nil || cq.Data != "a" || cq.From.ID != 11 || cq.Message.Message == nil ||
		cq.Message.Message.ID != sent.ID || cq.Message.Message.Chat.ID != -100 {
		t.Fatalf("callback update = %+v", cq)
	}
	ok, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: cq.ID, Text: "done"})
	if err != nil || !ok {
		t.Fatalf("AnswerCallbackQuery: %v %v", ok, err)
	}
	if a := s.CallbackAnswers(); len(a) != 1 || a[0].ID != cq.ID || a[0].Text != "done" {
		t.Errorf("CallbackAnswers = %+v", a)
	}
	if _, err := b.AnswerCallbackQuery(ctx, &bot.AnswerCallbackQueryParams{CallbackQueryID: cq.ID}); err == nil {
		t.Error("second answer to the same query succeeded")
	}
}

func TestSendMessage(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s, bot.WithSkipGetMe())
	ctx := testContext(t)
	_, userMsg := s.PushMessage(telegramtest.Incoming{ChatID: 3, UserID: 3, Text: "hi"})

	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{
		ChatID: 3, Text: `<b>Hi</b> &amp; <a href="https://x.io">x</a>`, ParseMode: models.ParseModeHTML,
		MessageThreadID: 4,
		ReplyParameters: &models.ReplyParameters{MessageID: userMsg},
		ReplyMarkup: &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{
			{{Text: "Yes", CallbackData: "y"}, {Text: "No", CallbackData: "n"}},
			{{Text: "Docs", URL: "https://x.io"}},
		}},
	})
	if err != nil {
		t.Fatalf("SendMessage: %v", err)
	}
	if sent.Text != "Hi & x" || sent.Chat.ID != 3 || sent.ReplyToMessage == nil || sent.ReplyToMessage.ID != userMsg {
		t.Errorf("returned message = %+v", sent)
	}
	msgs := s.Messages(3)
	if len(msgs) != 1 {
		t.Fatalf("Messages = %+v", msgs)
	}
	m := msgs[0]
	want := [][]telegramtest.Button{{{Text: "Yes", CallbackData: "y"}, {Text: "No", CallbackData: "n"}}, {{Text: "Docs", URL: "https://x.io"}}}
	if m.ID != sent.ID || m.ParseMode != "HTML" || m.Visible != "Hi & x" || m.ThreadID != 4 ||
		m.ReplyTo != userMsg || !slices.EqualFunc(m.Buttons, want, slices.Equal) {
		t.Errorf("recorded message = %+v", m)
	}

	// reply_to_message_id, the older form, works too.
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 3, Text: "again"}); err != nil {
		t.Fatal(err)
	}
	status, resp := call(t, s, token, "sendMessage", map[string]any{"chat_id": 3, "text": "old style", "reply_to_message_id": userMsg})
	if status != 200 || !resp.OK {
		t.Fatalf("reply_to_message_id: %d %+v", status, resp)
	}
	if m := s.Messages(3)[2]; m.ReplyTo != userMsg {
		t.Errorf("reply_to_message_id not recorded: %+v", m)
	}
}

func TestSendMessageValidation(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s, bot.WithSkipGetMe())
	ctx := testContext(t)
	long := strings.Repeat("x", 4097)
	tests := []struct {
		name   string
		params *bot.SendMessageParams
		want   string
	}{
		{"empty", &bot.SendMessageParams{ChatID: 1, Text: " "}, "message text is empty"},
		{"too long", &bot.SendMessageParams{ChatID: 1, Text: long}, "message is too long"},
		{"too long after entities", &bot.SendMessageParams{ChatID: 1, Text: "<b>" + long + "</b>", ParseMode: models.ParseModeHTML}, "message is too long"},
		{"unclosed tag", &bot.SendMessageParams{ChatID: 1, Text: "<b>x", ParseMode: models.ParseModeHTML}, "can't parse entities"},
		{"crossed tags", &bot.SendMessageParams{ChatID: 1, Text: "<b><i>x</b></i>", ParseMode: models.ParseModeHTML}, "can't parse entities"},
		{"unsupported tag", &bot.SendMessageParams{ChatID: 1, Text: "<script>x</script>", ParseMode: models.ParseModeHTML}, "can't parse entities"},
		{"raw ampersand", &bot.SendMessageParams{ChatID: 1, Text: "a & b", ParseMode: models.ParseModeHTML}, "can't parse entities"},
		{"bold in code", &bot.SendMessageParams{ChatID: 1, Text: "<code><b>x</b></code>", ParseMode: models.ParseModeHTML}, "can't parse entities"},
		{"nested quote", &bot.SendMessageParams{ChatID: 1, Text: "<blockquote><blockquote>x</blockquote></blockquote>", ParseMode: models.ParseModeHTML}, "can't parse entities"},
		{"long callback data", &bot.SendMessageParams{ChatID: 1, Text: "x", ReplyMarkup: &models.InlineKeyboardMarkup{
			InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "A", CallbackData: strings.Repeat("d", 65)}}}}}, "BUTTON_DATA_INVALID"},
		{"missing reply target", &bot.SendMessageParams{ChatID: 1, Text: "x", ReplyParameters: &models.ReplyParameters{MessageID: 99}}, "message to be replied not found"},
		{"username chat", &bot.SendMessageParams{ChatID: "@nobody", Text: "x"}, "chat not found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := b.SendMessage(ctx, tt.params)
			if !errors.Is(err, bot.ErrorBadRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want Bad Request %q", err, tt.want)
			}
		})
	}
	if n := len(s.Messages(1)); n != 0 {
		t.Errorf("%d invalid messages recorded", n)
	}
	// Exactly 4096 characters, and a missing reply target that may be skipped, are fine.
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: strings.Repeat("😀", 2048)}); err != nil {
		t.Errorf("4096 UTF-16 units: %v", err)
	}
	m, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "x",
		ReplyParameters: &models.ReplyParameters{MessageID: 99, AllowSendingWithoutReply: true}})
	if err != nil || m.ReplyToMessage != nil {
		t.Errorf("allow_sending_without_reply: %+v %v", m, err)
	}
}

func TestEditMessages(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s, bot.WithSkipGetMe())
	ctx := testContext(t)
	kb := &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "A", CallbackData: "a"}}}}
	sent, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 8, Text: "v1", ReplyMarkup: kb})
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 8, MessageID: sent.ID, Text: "v1", ReplyMarkup: kb})
	if err == nil || !strings.Contains(err.Error(), "message is not modified") {
		t.Errorf("identical edit: err = %v, want not modified", err)
	}
	if _, err := b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 8, MessageID: sent.ID, Text: "<i>v2</i>", ParseMode: models.ParseModeHTML}); err != nil {
		t.Fatalf("EditMessageText: %v", err)
	}
	m := s.Messages(8)[0]
	if m.Text != "<i>v2</i>" || m.Visible != "v2" || m.Buttons != nil || m.Edits != 1 {
		t.Errorf("after edit without markup: %+v", m)
	}
	if _, err := b.EditMessageReplyMarkup(ctx, &bot.EditMessageReplyMarkupParams{ChatID: 8, MessageID: sent.ID, ReplyMarkup: kb}); err != nil {
		t.Fatalf("EditMessageReplyMarkup: %v", err)
	}
	if m := s.Messages(8)[0]; len(m.Buttons) != 1 || m.Edits != 2 || m.Text != "<i>v2</i>" {
		t.Errorf("after markup edit: %+v", m)
	}
	edits := s.Edits(8)
	if len(edits) != 2 || edits[0].Method != "editMessageText" || edits[1].Method != "editMessageReplyMarkup" {
		t.Errorf("Edits = %+v", edits)
	}
	_, err = b.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: 8, MessageID: 999, Text: "x"})
	if err == nil || !strings.Contains(err.Error(), "message to edit not found") {
		t.Errorf("edit of a missing message: %v", err)
	}
}

func TestFailInjectsErrors(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s, bot.WithSkipGetMe())
	ctx := testContext(t)
	s.Fail("sendMessage", 429, 7, 1)
	_, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "x"})
	var tooMany *bot.TooManyRequestsError
	if !errors.As(err, &tooMany) || tooMany.RetryAfter != 7 {
		t.Fatalf("err = %v, want TooManyRequestsError retry_after 7", err)
	}
	if _, err := b.SendMessage(ctx, &bot.SendMessageParams{ChatID: 1, Text: "x"}); err != nil {
		t.Fatalf("second send: %v", err)
	}
	s.FailWith("sendChatAction", telegramtest.Failure{Status: 403, Times: 2})
	for range 2 {
		if _, err := b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: 1, Action: models.ChatActionTyping}); !errors.Is(err, bot.ErrorForbidden) {
			t.Errorf("err = %v, want Forbidden", err)
		}
	}
	if _, err := b.SendChatAction(ctx, &bot.SendChatActionParams{ChatID: 1, Action: models.ChatActionTyping, MessageThreadID: 3}); err != nil {
		t.Fatal(err)
	}
	if got := s.ChatActions(1); len(got) != 1 || got[0] != (telegramtest.ChatAction{Action: "typing", ThreadID: 3}) {
		t.Errorf("ChatActions = %+v", got)
	}
	if got := s.Requests("sendMessage"); got != 2 {
		t.Errorf("Requests(sendMessage) = %d, want 2", got)
	}
	if got := len(s.Messages(1)); got != 1 {
		t.Errorf("%d messages recorded, want 1", got)
	}
}

func TestOffline(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	s.SetOffline(true)
	_, err := bot.New(token, bot.WithServerURL(s.URL()))
	if err == nil || errors.Is(err, bot.ErrorUnauthorized) {
		t.Fatalf("bot.New while offline: err = %v, want a transport error", err)
	}
	s.SetOffline(false)
	newBot(t, s)
}

func TestCommandsAndOtherBodies(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	b := newBot(t, s, bot.WithSkipGetMe())
	ctx := testContext(t)
	cmds := []models.BotCommand{{Command: "help", Description: "Show help"}, {Command: "status", Description: "Show status"}}
	if _, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: cmds}); err != nil {
		t.Fatal(err)
	}
	if got := s.Commands(); len(got) != 2 || got[1].Command != "status" {
		t.Errorf("Commands = %+v", got)
	}
	if _, err := b.SetMyCommands(ctx, &bot.SetMyCommandsParams{Commands: []models.BotCommand{{Command: "Bad Name", Description: "x"}}}); err == nil {
		t.Error("invalid command accepted")
	}
	if ok, err := b.DeleteWebhook(ctx, &bot.DeleteWebhookParams{}); err != nil || !ok {
		t.Errorf("DeleteWebhook: %v %v", ok, err)
	}

	form := url.Values{"chat_id": {"12"}, "text": {"from a form"}}
	r, err := http.PostForm(s.URL()+"/bot"+token+"/sendMessage", form)
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	if r.StatusCode != 200 {
		t.Fatalf("urlencoded sendMessage: %d", r.StatusCode)
	}
	q := url.Values{"chat_id": {"12"}, "text": {"from a query"}}
	r, err = http.Get(s.URL() + "/bot" + token + "/sendMessage?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	r.Body.Close()
	msgs, err := s.WaitMessages(ctx, 12, 2)
	if err != nil || msgs[0].Text != "from a form" || msgs[1].Text != "from a query" {
		t.Errorf("WaitMessages = %+v, %v", msgs, err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if got, err := s.WaitMessages(short, 12, 3); !errors.Is(err, context.DeadlineExceeded) || len(got) != 2 {
		t.Errorf("WaitMessages past the messages sent: %d, %v", len(got), err)
	}
}

func TestPushUpdateAndEditedMessages(t *testing.T) {
	s := telegramtest.NewServer(token)
	defer s.Close()
	id := s.PushUpdate(map[string]any{"my_chat_member": map[string]any{"date": 1}})
	uid, _ := s.PushMessage(telegramtest.Incoming{ChatID: 2, UserID: 2, Text: "fixed", Edited: true,
		Extra: map[string]any{"entities": []any{}}})
	_, resp := call(t, s, token, "getUpdates", map[string]any{})
	var ups []map[string]json.RawMessage
	if err := json.Unmarshal(resp.Result, &ups); err != nil {
		t.Fatal(err)
	}
	if len(ups) != 2 || ups[0]["my_chat_member"] == nil || string(ups[0]["update_id"]) != strconv.FormatInt(id, 10) ||
		ups[1]["edited_message"] == nil || string(ups[1]["update_id"]) != strconv.FormatInt(uid, 10) {
		t.Errorf("updates = %s", resp.Result)
	}
}

func TestWatchSeesEachSentMessageOnce(t *testing.T) {
	s := telegramtest.NewServer(token)
	t.Cleanup(s.Close)
	call(t, s, token, "sendMessage", map[string]any{"chat_id": 5, "text": "before"})
	got := make(chan telegramtest.Message, 10)
	s.Watch(func(m telegramtest.Message) { got <- m })
	for _, text := range []string{"one", "two"} {
		if status, _ := call(t, s, token, "sendMessage", map[string]any{"chat_id": 5, "text": text}); status != 200 {
			t.Fatalf("sendMessage %q: status %d", text, status)
		}
	}
	call(t, s, token, "sendMessage", map[string]any{"chat_id": 5}) // no text: refused, not seen
	s.Watch(nil)
	call(t, s, token, "sendMessage", map[string]any{"chat_id": 5, "text": "after"})
	close(got)
	var texts []string
	for m := range got {
		if m.ChatID != 5 {
			t.Errorf("message %q in chat %d, want 5", m.Text, m.ChatID)
		}
		texts = append(texts, m.Text)
	}
	if strings.Join(texts, ",") != "one,two" {
		t.Errorf("watched %q, want the two messages sent while watching", texts)
	}
}
