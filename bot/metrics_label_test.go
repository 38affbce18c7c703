package bot_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/switchboard-chat/switchboard/bot"
)

func TestWriteLabeled(t *testing.T) {
	in := "# HELP a_total Things.\n# TYPE a_total counter\na_total 3\nb{platform=\"telegram\"} 1.5\nc{} 2\nd_bucket{le=\"+Inf\",x=\"a b\"} 7\n"
	want := "# HELP a_total Things.\n# TYPE a_total counter\na_total{replica=\"pod-\\\"1\\\"\"} 3\n" +
		"b{replica=\"pod-\\\"1\\\"\",platform=\"telegram\"} 1.5\nc{replica=\"pod-\\\"1\\\"\"} 2\n" +
		"d_bucket{replica=\"pod-\\\"1\\\"\",le=\"+Inf\",x=\"a b\"} 7\n"
	var out bytes.Buffer
	bot.WriteLabeled(&out, "replica", `pod-"1"`, func(w io.Writer) { _, _ = io.WriteString(w, in) })
	if out.String() != want {
		t.Errorf("got\n%s\nwant\n%s", out.String(), want)
	}
}
