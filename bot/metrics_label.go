package bot

import (
	"bufio"
	"bytes"
	"io"
	"strconv"
)

// WriteLabeled calls write and copies what it writes, Prometheus text
// format, to w with the label name="value" added to every sample, so that
// the metrics of several replicas stay apart however they are scraped
// (replica="pod-a"). Comment lines pass unchanged.
func WriteLabeled(w io.Writer, name, value string, write func(io.Writer)) {
	var buf bytes.Buffer
	write(&buf)
	label := name + "=" + strconv.Quote(value)
	bw := bufio.NewWriter(w)
	for line := range bytes.Lines(buf.Bytes()) {
		if len(line) == 0 || line[0] == '#' {
			_, _ = bw.Write(line)
			continue
		}
		nameEnd := bytes.IndexAny(line, "{ ")
		switch {
		case nameEnd < 0:
			_, _ = bw.Write(line) // not a sample
		case line[nameEnd] == '{':
			_, _ = bw.Write(line[:nameEnd+1])
			_, _ = bw.WriteString(label)
			if line[nameEnd+1] != '}' {
				_ = bw.WriteByte(',')
			}
			_, _ = bw.Write(line[nameEnd+1:])
		default:
			_, _ = bw.Write(line[:nameEnd])
			_ = bw.WriteByte('{')
			_, _ = bw.WriteString(label)
			_ = bw.WriteByte('}')
			_, _ = bw.Write(line[nameEnd:])
		}
	}
	_ = bw.Flush()
}
