package postgres_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/storage/postgres"
)

// column runs sql, whose rows have one column, and returns its values;
// any error fails the test.
func column[T any](t *testing.T, ctx context.Context, db *postgres.DB, sql string, args ...any) []T {
	t.Helper()
	rows, err := db.Pool().Query(ctx, sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	values, err := pgx.CollectRows(rows, pgx.RowTo[T])
	if err != nil {
		t.Fatal(err)
	}
	return values
}
