package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/switchboard-chat/switchboard/bot/handoff"
)

var _ handoff.RouteStore = (*DB)(nil)

// GetRoute implements handoff.RouteStore.
func (db *DB) GetRoute(ctx context.Context, address string) (*handoff.Route, error) {
	var r handoff.Route
	err := db.pool.QueryRow(ctx, `SELECT address, agent, from_agent, reason, set_by, set_at, expires_at
		FROM handoff_routes WHERE address = $1`, storable(address)).
		Scan(&r.Address, &r.Agent, &r.From, &r.Reason, &r.By, &r.SetAt, &r.Expires)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("get handoff route: %w", err)
	}
	return &r, nil
}

// SetRoute implements handoff.RouteStore.
func (db *DB) SetRoute(ctx context.Context, r handoff.Route) error {
	_, err := db.pool.Exec(ctx, `INSERT INTO handoff_routes (address, agent, from_agent, reason, set_by, set_at, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7)
		ON CONFLICT (address) DO UPDATE SET agent = EXCLUDED.agent, from_agent = EXCLUDED.from_agent,
			reason = EXCLUDED.reason, set_by = EXCLUDED.set_by, set_at = EXCLUDED.set_at, expires_at = EXCLUDED.expires_at`,
		storable(r.Address), storable(r.Agent), storable(r.From), storable(r.Reason), storable(r.By), r.SetAt, r.Expires)
	if err != nil {
		return fmt.Errorf("set handoff route: %w", err)
	}
	return nil
}

// DeleteRoute implements handoff.RouteStore.
func (db *DB) DeleteRoute(ctx context.Context, address string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM handoff_routes WHERE address = $1`, storable(address)); err != nil {
		return fmt.Errorf("delete handoff route: %w", err)
	}
	return nil
}
