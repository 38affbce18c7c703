package main

import (
	"bufio"
	"context"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// heapCounts are the Go runtime's allocation counters the daemon exports on
// /metrics; -1 when they could not be read.
type heapCounts struct {
	bytes, objects int64
}

// metricsURL is the daemon's /metrics beside its readiness URL.
func metricsURL(ready string) string {
	u, err := url.Parse(ready)
	if err != nil {
		return ""
	}
	u.Path, u.RawQuery = "/metrics", ""
	return u.String()
}

// scrapeHeap reads go_memstats_alloc_bytes_total and
// go_memstats_mallocs_total from the metrics page at url.
func scrapeHeap(ctx context.Context, url string) heapCounts {
	h := heapCounts{bytes: -1, objects: -1}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return h
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return h
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return h
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		h.read(sc.Text())
	}
	return h
}

// read takes one line of the Prometheus text format.
func (h *heapCounts) read(line string) {
	name, rest, ok := strings.Cut(line, " ")
	if !ok || strings.HasPrefix(line, "#") {
		return
	}
	name, _, _ = strings.Cut(name, "{")
	if i := strings.LastIndexByte(line, '}'); i >= 0 {
		rest = line[i+1:]
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
	if err != nil {
		return
	}
	switch name {
	case "go_memstats_alloc_bytes_total":
		h.bytes = int64(v)
	case "go_memstats_mallocs_total":
		h.objects = int64(v)
	}
}

// since returns the counts between before and h.
func (h heapCounts) since(before heapCounts) heapCounts {
	d := heapCounts{bytes: -1, objects: -1}
	if h.bytes >= 0 && before.bytes >= 0 {
		d.bytes = h.bytes - before.bytes
	}
	if h.objects >= 0 && before.objects >= 0 {
		d.objects = h.objects - before.objects
	}
	return d
}
