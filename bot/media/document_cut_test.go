package media

import (
	"strings"
	"testing"
)

// endless is a text that never ends.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'a'
	}
	e.read += len(p)
	return len(p), nil
}

func TestMediaCutStopsReading(t *testing.T) {
	src := &endless{}
	ex, err := cut(src, 1000, 50, 0)
	if err != nil || ex.Text != strings.Repeat("a", 50) || !ex.More || ex.NextOffset != 1050 {
		t.Fatalf("cut of an endless text = %+v, %v", ex, err)
	}
	if src.read > 1<<16 {
		t.Fatalf("cut read %d bytes of an endless text for a window of 1050 characters", src.read)
	}
}

func TestMediaCutPages(t *testing.T) {
	ex, err := cut(strings.NewReader("one\n\ftwo\n\f"), 0, 100, 3)
	if err != nil || ex.Text != "[page 3]\none\n[page 4]\ntwo\n" || ex.More {
		t.Fatalf("cut of two pages from page 3 = %+v, %v", ex, err)
	}
	// Stopped inside page 4: read on from page 4, past what was shown of it.
	ex, err = cut(strings.NewReader("one\n\ftwo\n\f"), 0, 15, 3)
	if err != nil || ex.Text != "[page 3]\none\n[p" || !ex.More || ex.NextPage != 4 || ex.NextOffset != 2 {
		t.Fatalf("cut of 15 characters = %+v, %v; want more from page 4, offset 2", ex, err)
	}
}
