package handoff

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"
)

// Route sends a chat's conversation to an agent other than its binding's
// until it is handed back or expires.
type Route struct {
	Address string // platform:chat[:thread]
	Agent   string // who answers now
	From    string // who handed it over
	Reason  string
	By      string // platform:user_id, or "agent:NAME" for the handoff tool
	SetAt   time.Time
	Expires time.Time
}

// RouteCache is the fast, shared copy of the routes (Redis). A nil route
// with ok true is a remembered "no route".
type RouteCache interface {
	GetRoute(ctx context.Context, address string) (r *Route, ok bool, err error)
	// PutRoute caches r (nil: "no route") for ttl.
	PutRoute(ctx context.Context, address string, r *Route, ttl time.Duration) error
}

// RouteStore is the durable copy of the routes (Postgres): a Redis loss
// or flush restores from it.
type RouteStore interface {
	GetRoute(ctx context.Context, address string) (*Route, error) // nil, nil: none
	SetRoute(ctx context.Context, r Route) error
	DeleteRoute(ctx context.Context, address string) error
}

// RoutesOptions wires Routes.
type RoutesOptions struct {
	Cache RouteCache
	Store RouteStore
	// TTL is how long a route lasts without use (handoff.ttl, default 24h);
	// every message through it renews it.
	TTL    time.Duration
	Logger *slog.Logger
}

// Routes keeps the handoff routes: Redis answers every message's "who
// answers here?", Postgres keeps them through Redis restarts and flushes.
type Routes struct{ o RoutesOptions }

// noRouteTTL is how long Redis remembers that a chat has no route, and
// routeCacheTTL how long it keeps a route before asking Postgres again:
// they bound how stale a replica can be if a cache write failed.
const (
	noRouteTTL    = time.Minute
	routeCacheTTL = 5 * time.Minute
)

// loopWindow: handing a chat back to the agent that just handed it over
// within this time is refused as a loop.
const loopWindow = time.Minute

// NewRoutes returns Routes.
func NewRoutes(o RoutesOptions) *Routes {
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Routes{o: o}
}

// Current returns the live route of address, or nil. Redis is asked
// first; on a miss (never cached, expired, or flushed) Postgres answers
// and Redis is refilled. A route in use is renewed.
func (h *Routes) Current(ctx context.Context, address string) (*Route, error) {
	now := time.Now()
	r, ok, err := h.o.Cache.GetRoute(ctx, address)
	if err != nil {
		h.o.Logger.Debug("handoff cache unavailable; asking postgres", "err", err)
		ok = false
	}
	if !ok {
		if r, err = h.o.Store.GetRoute(ctx, address); err != nil {
			return nil, fmt.Errorf("handoff route of %s: %w", address, err)
		}
		if r != nil && !now.Before(r.Expires) {
			r = nil
		}
		ttl := noRouteTTL
		if r != nil {
			ttl = min(r.Expires.Sub(now), routeCacheTTL)
		}
		_ = h.o.Cache.PutRoute(ctx, address, r, ttl)
	}
	if r == nil {
		return nil, nil
	}
	// Renew a route that has used half its time.
	if r.Expires.Sub(now) < h.o.TTL/2 {
		r.Expires = now.Add(h.o.TTL)
		if err := h.o.Store.SetRoute(ctx, *r); err == nil {
			_ = h.o.Cache.PutRoute(ctx, address, r, routeCacheTTL)
		}
	}
	return r, nil
}

// ErrLoop refuses handing a chat straight back within loopWindow.
var ErrLoop = errors.New("that would hand the conversation straight back (a loop)")

// Set routes address to agent (from the agent answering now). A route
// that undoes one made less than a minute ago is refused.
func (h *Routes) Set(ctx context.Context, address, agent, from, reason, by string) (Route, error) {
	now := time.Now()
	cur, err := h.Current(ctx, address)
	if err != nil {
		return Route{}, err
	}
	if cur != nil && cur.From == agent && cur.Agent == from && now.Sub(cur.SetAt) < loopWindow {
		return Route{}, ErrLoop
	}
	r := Route{Address: address, Agent: agent, From: from, Reason: reason, By: by, SetAt: now, Expires: now.Add(h.o.TTL)}
	if err := h.o.Store.SetRoute(ctx, r); err != nil {
		return Route{}, fmt.Errorf("store handoff route: %w", err)
	}
	if err := h.o.Cache.PutRoute(ctx, address, &r, min(h.o.TTL, routeCacheTTL)); err != nil {
		h.o.Logger.Warn("handoff cache unavailable; other replicas see the route within a minute", "err", err)
	}
	h.o.Logger.Info("conversation handed off", "address", address, "to", agent, "from", from, "by", by)
	return r, nil
}

// Clear removes address's route (hand back to the binding's agent).
func (h *Routes) Clear(ctx context.Context, address string) error {
	if err := h.o.Store.DeleteRoute(ctx, address); err != nil {
		return fmt.Errorf("delete handoff route: %w", err)
	}
	if err := h.o.Cache.PutRoute(ctx, address, nil, noRouteTTL); err != nil {
		h.o.Logger.Warn("handoff cache unavailable; other replicas see the change within 5 minutes", "err", err)
	}
	return nil
}
