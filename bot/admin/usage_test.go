package admin_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/bot/admin"
)

// TestUsageEndpoint: group_by and since reach the feature as asked; a
// grouping it does not know, or a since that is not RFC 3339, is a 400
// naming what is allowed and asks nothing; without usage wired it is 404.
func TestUsageEndpoint(t *testing.T) {
	type asked struct {
		groupBy string
		since   time.Time
	}
	var calls []asked
	o := admin.Options{Token: "tok"}
	o.Usage.GroupBys = []string{"identity", "chat", "agent", "model", "job"}
	o.Usage.Rows = func(_ context.Context, groupBy string, since time.Time) (any, error) {
		calls = append(calls, asked{groupBy, since})
		return []map[string]any{{"key": "telegram:1", "calls": 2}}, nil
	}
	ts := httptest.NewServer(admin.NewAPI(o))
	defer ts.Close()
	get := func(path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", ts.URL+path, nil)
		req.Header.Set("Authorization", "Bearer tok")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	code, body := get("/api/v1/usage?group_by=identity&since=2026-12-01T00:00:00Z")
	var got struct {
		GroupBy string `json:"group_by"`
		Usage   []struct {
			Key   string
			Calls int
		}
	}
	if err := json.Unmarshal([]byte(body), &got); code != 200 || err != nil || got.GroupBy != "identity" ||
		len(got.Usage) != 1 || got.Usage[0].Key != "telegram:1" {
		t.Fatalf("usage = %d %s", code, body)
	}
	if len(calls) != 1 || !calls[0].since.Equal(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("asked %+v", calls)
	}
	if code, _ := get("/api/v1/usage?group_by=job"); code != 200 || !calls[1].since.Equal(time.Now().UTC().Truncate(24*time.Hour)) {
		t.Errorf("without since: %d, asked since %v", code, calls[1].since)
	}
	for _, bad := range []struct{ query, want string }{
		{"group_by=session_key", "group_by must be one of identity, chat, agent, model, job"},
		{"", "group_by must be one of"},
		{"group_by=identity%3BDROP", "group_by must be one of"},
		{"group_by=chat&since=yesterday", "since must be an RFC 3339 time"},
		{"group_by=chat&since=2026-12-01", "since must be an RFC 3339 time"},
	} {
		code, body := get("/api/v1/usage?" + bad.query)
		if code != http.StatusBadRequest || !strings.Contains(body, bad.want) {
			t.Errorf("%s: %d %s", bad.query, code, body)
		}
	}
	if len(calls) != 2 {
		t.Errorf("bad requests reached the store: %+v", calls)
	}

	off := httptest.NewServer(admin.NewAPI(admin.Options{Token: "tok"}))
	defer off.Close()
	req, _ := http.NewRequest("GET", off.URL+"/api/v1/usage?group_by=identity", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unwired usage = %d", resp.StatusCode)
	}
}
