package redis_test

import (
	"testing"
	"time"
)

// TestBudgetTotals: a missing total is not created by an addition (it is
// rebuilt from PostgreSQL instead); a seed sets it once and later seeds
// read what is there; additions of nothing or less never reduce it.
func TestBudgetTotals(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			ctx := testContext(t)
			s := b.open(t)
			const key = "user/day/tokens:telegram:42:1700000000"
			if err := s.AddBudgetTotal(ctx, key, 50); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := s.BudgetTotal(ctx, key); err != nil || ok {
				t.Fatalf("total after an addition to a missing key: ok=%v, %v; want still missing", ok, err)
			}
			expire := time.Now().Add(time.Hour)
			if n, err := s.SeedBudgetTotal(ctx, key, 100, expire); err != nil || n != 100 {
				t.Fatalf("seed = %d, %v; want 100", n, err)
			}
			if n, err := s.SeedBudgetTotal(ctx, key, 7, expire); err != nil || n != 100 {
				t.Fatalf("second seed = %d, %v; want the first's 100", n, err)
			}
			for _, add := range []int64{20, 0, -500} {
				if err := s.AddBudgetTotal(ctx, key, add); err != nil {
					t.Fatal(err)
				}
			}
			if n, ok, err := s.BudgetTotal(ctx, key); err != nil || !ok || n != 120 {
				t.Errorf("total = %d, %v, %v; want 120 (negative additions ignored)", n, ok, err)
			}
			if n, err := s.SeedBudgetTotal(ctx, "over", 5, time.Now().Add(-time.Second)); err != nil || n != 5 {
				t.Errorf("seed of an ended period = %d, %v", n, err)
			}
			if _, ok, _ := s.BudgetTotal(ctx, "over"); ok {
				t.Error("a total of an ended period was kept")
			}
		})
	}
}
