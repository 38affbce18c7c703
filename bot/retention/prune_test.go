package retention_test

import (
	"context"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/retention"
)

// pruner counts the passes' calls.
type pruner struct{ messages, audit []time.Time }

func (p *pruner) PruneMessages(_ context.Context, before time.Time, _ int) (int, error) {
	p.messages = append(p.messages, before)
	return 0, nil
}
func (p *pruner) PruneAudit(_ context.Context, before time.Time, _ int) (int, error) {
	p.audit = append(p.audit, before)
	return 0, nil
}

func TestPruningsOnlyForPeriodsSet(t *testing.T) {
	p := &pruner{}
	if got := retention.Prunings(retention.PruneOptions{Store: p}); len(got) != 0 {
		t.Errorf("prunings with 0 (keep) everywhere = %d, want none", len(got))
	}
	got := retention.Prunings(retention.PruneOptions{Store: p, Audit: 48 * time.Hour})
	if len(got) != 1 || got[0].What != "audit log" {
		t.Fatalf("prunings = %+v, want the audit log's", got)
	}
	if _, err := got[0].Once(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(p.audit) != 1 || time.Since(p.audit[0]) < 48*time.Hour || time.Since(p.audit[0]) > 49*time.Hour || len(p.messages) != 0 {
		t.Errorf("audit pass pruned before %v, messages %v", p.audit, p.messages)
	}
}
