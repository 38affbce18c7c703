package main

import (
	"fmt"

	"github.com/switchboard-chat/switchboard/bot/budgets"
)

// newBudgets makes the budget guard from budgets: and llm.prices and,
// when budgets are configured, puts it in the agents' meter after the
// usage recorder (wireUsage), so a running total rebuilt from the usage
// records counts each call once. It exists before the agents, which meter
// their model calls with it; wireBudgets joins it to the router.
func (d *daemon) newBudgets() (*budgets.Guard, error) {
	list, err := budgets.Parse(d.cfg.Budgets)
	if err != nil {
		return nil, fmt.Errorf("budgets: %w", err)
	}
	g := budgets.New(budgets.Options{
		Budgets: list, Prices: pricesOf(d.cfg), Store: d.st.db, Totals: d.st.rdb, Messages: d.st.db,
		Admins: d.cfg.Admins, AdminChat: d.cfg.Approvals.Chat, Logger: d.log.With("component", "budgets"),
	})
	if len(list) > 0 {
		d.meter = append(d.meter, g)
	}
	return g, nil
}

// wireBudgets attaches the guard to the router and takes the presses on
// its Allow once more / Keep limit buttons (answered on any replica, also
// after budgets: was emptied).
func (d *daemon) wireBudgets() error {
	d.budgets.Attach(d.router)
	if err := d.router.HandlePresses(budgets.ButtonKind, d.budgets.Decide); err != nil {
		return fmt.Errorf("budgets: %w", err)
	}
	return nil
}
