package postgres

import (
	"context"
	"errors"
	"io"
	"net"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/sethvargo/go-retry"
)

// Transient-error retries: a terminated connection (a PostgreSQL restart, a
// failover, an admin's pg_terminate_backend), a reset socket or a
// serialization failure usually succeeds on the next try with a fresh
// connection from the pool.
const (
	retryBase     = 50 * time.Millisecond
	retryMaxDelay = 2 * time.Second
	// RetryBudget bounds how long one store call keeps retrying.
	RetryBudget = 15 * time.Second
)

// IsTransient reports whether err is worth retrying: the connection broke
// or the server asked for a retry (serialization failure, deadlock, shutdown
// in progress, too many connections). Cancellation and deadlines of the
// caller's context are not transient.
func IsTransient(err error) bool {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "40001", "40P01", // serialization failure, deadlock
			"57P01", "57P02", "57P03", // admin shutdown, crash shutdown, cannot connect now
			"53300": // too many connections
			return true
		}
		return len(pgErr.Code) == 5 && pgErr.Code[:2] == "08" // connection exceptions
	}
	if pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var netErr net.Error
	var connErr *pgconn.ConnectError
	return errors.As(err, &netErr) || errors.As(err, &connErr) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}

// withRetry runs op until it succeeds, fails with a non-transient error, ctx
// ends or RetryBudget is spent, backing off 50 ms, 100 ms … 2 s with jitter
// between tries. It returns op's last error.
//
// Only wrap operations that are safe to run twice: a statement whose commit
// succeeded but whose answer was lost runs again. Inserts need a unique key
// that makes the second one fail harmlessly (Append's ExternalID, Enqueue's
// (session, source_seq)) or must not be retried.
func withRetry(ctx context.Context, op func(ctx context.Context) error) error {
	b := retry.WithMaxDuration(RetryBudget,
		retry.WithCappedDuration(retryMaxDelay, retry.WithJitterPercent(20, retry.NewExponential(retryBase))))
	var last error
	err := retry.Do(ctx, b, func(ctx context.Context) error {
		last = op(ctx)
		if IsTransient(last) {
			return retry.RetryableError(last)
		}
		return last
	})
	if last != nil {
		return last
	}
	return err
}

// retryValue is withRetry for operations that return a value.
func retryValue[T any](ctx context.Context, op func(ctx context.Context) (T, error)) (T, error) {
	var v T
	err := withRetry(ctx, func(ctx context.Context) error {
		var err error
		v, err = op(ctx)
		return err
	})
	return v, err
}
