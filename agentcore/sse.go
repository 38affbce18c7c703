package agentcore

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"sync"
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
// fn must not keep data after it returns: its buffer is reused.
func readSSE(r io.Reader, fn func(data []byte) (bool, error)) error {
	bufs := sseBufs.Get().(*sseBuffers)
	defer sseBufs.Put(bufs)
	sc := bufio.NewScanner(r)
	// Most lines are one token's chunk; the scanner makes a larger buffer
	// for longer ones. (A 64 KiB buffer made for every model call was a
	// third of the bytes the daemon allocated under load:
	// docs/benchmarks.md, twelfth round.)
	sc.Buffer(bufs.line[:0], maxSSELine)
	data := bufs.data[:0]
	defer func() {
		if cap(data) <= maxPooledSSEData {
			bufs.data = data[:0]
		}
	}()
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

// sseBuffers are readSSE's line and event buffers, pooled: every model call
// reads a stream.
type sseBuffers struct {
	line, data []byte
}

// maxPooledSSEData bounds the event buffer kept for the next stream.
const maxPooledSSEData = 64 << 10

var sseBufs = sync.Pool{New: func() any { return &sseBuffers{line: make([]byte, 4<<10)} }}
