package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/jackc/pgx/v5"
)

// seedFirstExternalID numbers the seeded user messages' Telegram update
// ids far above those the fake hands out in a run (from 1), so the daemon
// never takes a message of the run for a redelivery of a seeded one.
const seedFirstExternalID = 9_000_000_000

// seedStatements store chats $1…$2 of $3 messages each (even: a user
// message and its reply, turn by turn), spread over the 30 days before an
// hour ago, as months of answered Telegram chats of the default agent
// leave them: each reply delivered (an outbox row marked sent) and its
// model call metered (an llm_usage row). They are what the daemon writes
// for a message, so its queries meet tables of that size and shape.
var seedStatements = []string{
	`INSERT INTO sessions (key, agent, scope, last_seq, created_at, updated_at)
	SELECT 'default/telegram:' || c, 'default', 'telegram:' || c, $3::int,
	       now() - interval '30 days 1 hour', now() - interval '1 hour'
	FROM generate_series($1::bigint, $2::bigint) c`,
	`INSERT INTO messages (session_key, seq, role, content, external_id, created_at)
	SELECT 'default/telegram:' || c, s, CASE WHEN s % 2 = 1 THEN 'user' ELSE 'assistant' END,
	       CASE WHEN s % 2 = 1 THEN 'a question about the report, number ' || s
	            ELSE 'echo: an answer about the report, with a few lines of detail, number ' || s END,
	       CASE WHEN s % 2 = 1 THEN (` + fmt.Sprint(seedFirstExternalID) + ` + c * $3::bigint + s)::text END,
	       now() - interval '1 hour' - (30 * 24 * 60 * ($3::int - s) / $3::int) * interval '1 minute'
	FROM generate_series($1::bigint, $2::bigint) c, generate_series(1, $3::int) s`,
	`INSERT INTO outbox (session_key, source_seq, platform, chat_id, text, reply_to, status, attempts,
	                    next_attempt_at, platform_message_id, created_at, sent_at, replaces)
	SELECT 'default/telegram:' || c, s, 'telegram', c::text, 'echo: an answer about the report', (c * $3::bigint + s)::text,
	       'sent', 1, t, (c * $3::bigint + s)::text, t, t, ARRAY[(c * $3::bigint + s - 1)::text]
	FROM generate_series($1::bigint, $2::bigint) c, generate_series(2, $3::int, 2) s,
	     LATERAL (SELECT now() - interval '1 hour' - (30 * 24 * 60 * ($3::int - s) / $3::int) * interval '1 minute' AS t) at`,
	`INSERT INTO llm_usage (at, identity, chat, agent, model, session_key, input_tokens, output_tokens)
	SELECT now() - interval '1 hour' - (30 * 24 * 60 * ($3::int - s) / $3::int) * interval '1 minute',
	       'telegram:' || c, 'telegram:' || c, 'default', 'test-model', 'default/telegram:' || c, 900, 60
	FROM generate_series($1::bigint, $2::bigint) c, generate_series(2, $3::int, 2) s`,
}

// seedPage is how many chats one round of seedStatements stores, so one
// transaction never holds millions of rows.
const seedPage = 10_000

// seedChats stores chats first…first+n-1 of perChat messages each (see
// seedStatements) into the database at dbURL, then analyzes the tables as
// autovacuum would, and reports how long it took.
func seedChats(ctx context.Context, dbURL string, first int64, n, perChat int) (time.Duration, error) {
	began := time.Now()
	conn, err := pgx.Connect(ctx, dbURL)
	if err != nil {
		return 0, fmt.Errorf("seed: connect: %w", err)
	}
	defer conn.Close(context.Background())
	for from := first; from < first+int64(n); from += seedPage {
		to := min(from+seedPage, first+int64(n)) - 1
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for _, stmt := range seedStatements {
				if _, err := tx.Exec(ctx, stmt, from, to, perChat); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return 0, fmt.Errorf("seed chats %d…%d (seed a database of its own, freshly created): %w", from, to, err)
		}
	}
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE sessions, messages, outbox, llm_usage`); err != nil {
		return 0, fmt.Errorf("seed: analyze: %w", err)
	}
	return time.Since(began), nil
}

// migrate applies the daemon's migrations with its own command
// ("switchboard migrate"), so seeding finds its tables.
func migrate(ctx context.Context, command []string) error {
	cmd := exec.CommandContext(ctx, command[0], "migrate")
	cmd.Env = os.Environ()
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%s migrate: %w: %s", command[0], err, out)
	}
	return nil
}
