package postgres_test

import "sync"

// outcome is what one of atOnce's calls returned: a row, whether this call
// created or decided it, and an error.
type outcome[T any] struct {
	row T
	ok  bool
	err error
}

// atOnce calls call(i) for every i below n from n goroutines released at
// the same moment, and returns what each returned, in order of i.
func atOnce[T any](n int, call func(i int) (T, bool, error)) []outcome[T] {
	out := make([]outcome[T], n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			out[i].row, out[i].ok, out[i].err = call(i)
		})
	}
	close(start)
	wg.Wait()
	return out
}
