package askuser

import (
	"context"
	"time"

	"github.com/switchboard-chat/switchboard/channels"
)

// Question statuses: pending until answered, expired or withdrawn.
const (
	StatusPending   = "pending"
	StatusAnswered  = "answered"
	StatusExpired   = "expired"
	StatusCancelled = "cancelled" // withdrawn by the person asked (/cancel)
)

// How an answer was given.
const (
	ByPress = "pressed"
	ByText  = "typed"
)

// Kind names questions in decision messages.
const Kind = "question"

// Question is one ask_user call waiting for, or given, its answer.
type Question struct {
	ID         string // random and unguessable (bot.NewID); travels in button data
	Session    string
	ToolCallID string // with Session names the call: one question per call
	Agent      string
	Asker      string           // platform:user_id of the person asked: the run's requester
	Chat       channels.Address // where the question is asked and answered
	Text       string
	Options    []string // the buttons' labels, in order; none: typed answers only
	Status     string
	// Answer is the chosen option or the typed text; AnsweredBy who gave
	// it ("system" for expiry) and How (ByPress, ByText; "" otherwise).
	Answer     string
	AnsweredBy string
	How        string
	// AnswerExternalID is the platform id of the message typed as the
	// answer, so a redelivery of it is known.
	AnswerExternalID string
	CreatedAt        time.Time
	ExpiresAt        time.Time
	AnsweredAt       time.Time
}

// Outcome is a change from pending: to StatusAnswered (Answer, By, How and,
// for a typed answer, ExternalID set), StatusExpired or StatusCancelled.
type Outcome struct {
	Status     string
	Answer     string
	By         string
	How        string
	ExternalID string
}

// Store keeps questions durable. Postgres implements it.
type Store interface {
	// CreateQuestion stores q (ID, CreatedAt and ExpiresAt set by the
	// caller) as pending unless a question for the same (Session,
	// ToolCallID) exists: then it returns that one with created=false.
	CreateQuestion(ctx context.Context, q Question) (stored Question, created bool, err error)
	// QuestionOfCall returns the question of (session, toolCallID), or
	// bot.ErrNotFound.
	QuestionOfCall(ctx context.Context, session, toolCallID string) (Question, error)
	// GetQuestion returns question id or bot.ErrNotFound.
	GetQuestion(ctx context.Context, id string) (Question, error)
	// DecideQuestion moves pending question id to o.Status in one atomic
	// change, so that of concurrent answers exactly one wins. An answer
	// loses once ExpiresAt has passed (the question stays pending for the
	// caller to expire). It returns the question as it is afterwards and
	// whether this call changed it.
	DecideQuestion(ctx context.Context, id string, o Outcome) (Question, bool, error)
	// AnswerTarget returns, in one indexed query, the question of session
	// a message from identity with externalID answers: the one pending for
	// identity, or the one that message answered before (a redelivery).
	// found is false when there is none.
	AnswerTarget(ctx context.Context, session, identity, externalID string) (q Question, found bool, err error)
	// PendingQuestionsOf lists session's pending questions, oldest first.
	PendingQuestionsOf(ctx context.Context, session string) ([]Question, error)
	// DueQuestions lists pending questions whose time is up, oldest first,
	// and when the next pending one expires (zero: none is pending; a time
	// already past: more are due than it listed).
	DueQuestions(ctx context.Context) (due []Question, next time.Time, err error)
}
