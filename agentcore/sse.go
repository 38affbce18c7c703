package agentcore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
)

// maxSSELine bounds one line of a server-sent event stream, so a server
// that never sends a newline cannot make the daemon buffer without end.
const maxSSELine = 8 << 20

// readSSE reads a text/event-stream body (the WHATWG format: "field: value"
// lines, an event ending at a blank line) and calls fn with the data of
// each event, its data lines joined by "\n". Comments, other fields and
// events without data are skipped. It stops when fn returns false or an
// error, or at the end of the body; an event cut off by the end of the body
// is still delivered, as browsers do not, but streaming servers that omit
// the last blank line are common.
func readSSE(r io.Reader, fn func(data []byte) (bool, error)) error {
	sc := bufio.NewScanner(r)
	// Most lines are one token's chunk; the buffer doubles for longer ones.
	// (A 64 KiB buffer made for every model call was a third of the bytes
	// the daemon allocated under load: docs/benchmarks.md, twelfth round.)
	sc.Buffer(make([]byte, 0, 4<<10), maxSSELine)
	var data []byte
	has := false
	dispatch := func() (bool, error) {
		if !has {
			return true, nil
		}
		more, err := fn(data)
		data, has = data[:0], false
		return more, err
	}
	for sc.Scan() {
		line := sc.Bytes() // without its "\n" or "\r\n"
		if len(line) == 0 {
			if more, err := dispatch(); err != nil || !more {
				return err
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		if string(field) != "data" {
			continue // a comment (":…"), event, id or retry line
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if has {
			data = append(data, '\n')
		}
		data = append(data, value...)
		has = true
	}
	if err := sc.Err(); err != nil {
		if err == bufio.ErrTooLong {
			return fmt.Errorf("a line of the event stream is longer than %d bytes", maxSSELine)
		}
		return err
	}
	_, err := dispatch()
	return err
}
