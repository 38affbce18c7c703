package agentcore

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadSSE(t *testing.T) {
	tests := []struct {
		name, body string
		want       []string
	}{
		{"one event per blank line", "data: a\n\ndata: b\n\n", []string{"a", "b"}},
		{"multi-line data joined", "data: a\ndata: b\n\n", []string{"a\nb"}},
		{"CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"no space after colon", "data:a\n\n", []string{"a"}},
		{"only the first space dropped", "data:  a\n\n", []string{" a"}},
		{"comments, event and id lines skipped", ": keep-alive\nevent: delta\nid: 7\nretry: 100\ndata: x\n\n", []string{"x"}},
		{"events without data skipped", "event: ping\n\n\n\ndata: y\n\n", []string{"y"}},
		{"last event without blank line", "data: a\n\ndata: tail", []string{"a", "tail"}},
		{"empty data is an event", "data:\n\n", []string{""}},
		{"not a stream at all", `{"object":"chat.completion"}`, nil},
		{"lines longer than the first buffer", "data: " + strings.Repeat("x", 100<<10) + "\n\ndata: " + strings.Repeat("y", 5000) + "\n\n",
			[]string{strings.Repeat("x", 100<<10), strings.Repeat("y", 5000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			err := readSSE(iotest.OneByteReader(strings.NewReader(tt.body)), func(d []byte) (bool, error) {
				got = append(got, string(d))
				return true, nil
			})
			if err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("readSSE = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

func TestReadSSEStopsWhenTold(t *testing.T) {
	var got []string
	stop := errors.New("stop")
	err := readSSE(strings.NewReader("data: 1\n\ndata: 2\n\ndata: 3\n\n"), func(d []byte) (bool, error) {
		got = append(got, string(d))
		return string(d) != "2", nil
	})
	if err != nil || len(got) != 2 {
		t.Fatalf("after false: %q, %v; want 2 events, no error", got, err)
	}
	got = nil
	err = readSSE(strings.NewReader("data: 1\n\ndata: 2\n\n"), func(d []byte) (bool, error) {
		got = append(got, string(d))
		return true, stop
	})
	if !errors.Is(err, stop) || len(got) != 1 {
		t.Fatalf("after an error: %q, %v; want 1 event and the error", got, err)
	}
}

func TestReadSSERefusesEndlessLine(t *testing.T) {
	body := "data: " + strings.Repeat("x", maxSSELine+1)
	err := readSSE(strings.NewReader(body), func([]byte) (bool, error) {
		t.Fatal("an over-long event was delivered")
		return false, nil
	})
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("err = %v, want the line refused", err)
	}
}
