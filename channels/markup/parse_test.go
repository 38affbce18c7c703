package markup

import (
	"fmt"
	"sync"
	"testing"
)

// One parser serves every send: parsing from many goroutines at once gives
// each the same result as parsing alone (run with -race to check it shares
// no state).
func TestParserIsSharedSafely(t *testing.T) {
	docs := []string{"**bold** and ~~gone~~ ~5 min", "| a | b |\n|---|---|\n| 1 | 2 |", "- [x] done\n- [ ] todo", "`code` <b>x</b>"}
	want := make([]string, len(docs))
	for i, d := range docs {
		want[i] = fmt.Sprint(TelegramHTML(d, 4096))
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; n < 50; n++ {
				i := (g + n) % len(docs)
				if got := fmt.Sprint(TelegramHTML(docs[i], 4096)); got != want[i] {
					t.Errorf("concurrent parse of %q = %s, want %s", docs[i], got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
