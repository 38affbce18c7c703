package redis_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	goredis "github.com/redis/go-redis/v9"

	"github.com/switchboard-chat/switchboard/bot/teams"
	sbredis "github.com/switchboard-chat/switchboard/storage/redis"
	"github.com/switchboard-chat/switchboard/storage/redis/redistest"
)

// TestMailboxEveryMessageReadExactlyOnce: 1 000 messages between three
// agents, read by two replicas at once while a third reader takes a batch
// and dies before confirming it: every message is read exactly once (the
// dead reader's batch is delivered again), and repeating a read returns
// the same batch.
func TestMailboxEveryMessageReadExactlyOnce(t *testing.T) {
	old := sbredis.SetMailReclaim(300 * time.Millisecond)
	defer sbredis.SetMailReclaim(old)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	a, b := openStore(t, url, prefix), openStore(t, url, prefix)
	members := []string{"lead", "m1", "m2"}
	sent := map[string]bool{}
	for i := range 1000 {
		from, to := members[i%3], members[(i+1)%3]
		store := a
		if i%2 == 1 {
			store = b
		}
		id, err := store.Send(ctx, "crew", teams.MailMessage{From: from, To: to, Text: fmt.Sprintf("msg %d", i)})
		if err != nil {
			t.Fatal(err)
		}
		sent[to+"/"+id] = true
	}
	// A reader on a third replica takes 100 of m1's messages and dies
	// before confirming them.
	raw := goredis.NewClient(mustOptions(t, url))
	defer raw.Close()
	res, err := raw.XReadGroup(ctx, &goredis.XReadGroupArgs{Group: "readers", Consumer: "dead-replica",
		Streams: []string{prefix + "team:crew:inbox:m1", ">"}, Count: 100, Block: -1}).Result()
	if err != nil || len(res) != 1 || len(res[0].Messages) != 100 {
		t.Fatalf("the dying reader got %v, %v", res, err)
	}

	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	reads := 0
	for r, store := range []*sbredis.Store{a, b} {
		for _, m := range members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := 0; ctx.Err() == nil; n++ {
					key := fmt.Sprintf("replica%d/%s/read%d", r, m, n)
					msgs, err := store.Read(ctx, "crew", m, key, 37)
					if err != nil {
						t.Errorf("read: %v", err)
						return
					}
					again, err := store.Read(ctx, "crew", m, key, 37)
					if err != nil || len(again) != len(msgs) {
						t.Errorf("repeating read %s gave %d messages, first %d (%v)", key, len(again), len(msgs), err)
					}
					mu.Lock()
					reads++
					for _, msg := range msgs {
						seen[m+"/"+msg.ID]++
					}
					done := len(seen) >= len(sent)
					mu.Unlock()
					if done {
						return
					}
					if len(msgs) == 0 {
						time.Sleep(50 * time.Millisecond)
					}
				}
			}()
		}
	}
	wg.Wait()
	for id := range sent {
		if seen[id] != 1 {
			t.Errorf("message %s read %d times", id, seen[id])
		}
	}
	if len(seen) != len(sent) {
		t.Errorf("%d messages read, %d sent", len(seen), len(sent))
	}
	t.Logf("%d reads by two replicas", reads)
}

func mustOptions(t *testing.T, url string) *goredis.Options {
	t.Helper()
	o, err := goredis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestMailboxFetchThenAck: fetched mail is nobody else's until confirmed;
// a fetcher that dies before Ack has its messages (origin included)
// handed to the next fetcher once they are abandoned; confirmed mail is
// never fetched again.
func TestMailboxFetchThenAck(t *testing.T) {
	old := sbredis.SetMailReclaim(300 * time.Millisecond)
	defer sbredis.SetMailReclaim(old)
	ctx := context.Background()
	url, prefix := redistest.URL(t), redistest.Prefix(t)
	a, b := openStore(t, url, prefix), openStore(t, url, prefix)
	for i := range 3 {
		if _, err := a.Send(ctx, "crew", teams.MailMessage{From: "lead", To: "m1", Text: fmt.Sprint("job ", i), Origin: "telegram:42"}); err != nil {
			t.Fatal(err)
		}
	}
	got, err := a.Fetch(ctx, "crew", "m1", 2)
	if err != nil || len(got) != 2 || got[0].Text != "job 0" || got[0].Origin != "telegram:42" || got[0].From != "lead" {
		t.Fatalf("Fetch = %+v, %v", got, err)
	}
	// a "dies" holding job 0 and 1; b gets only job 2 meanwhile.
	again, err := b.Fetch(ctx, "crew", "m1", 10)
	if err != nil || len(again) != 1 || again[0].Text != "job 2" {
		t.Fatalf("second Fetch = %+v, %v; want only job 2", again, err)
	}
	if err := b.Ack(ctx, "crew", "m1", again[0].ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	taken, err := b.Fetch(ctx, "crew", "m1", 10)
	if err != nil || len(taken) != 2 || taken[0].ID != got[0].ID || taken[1].ID != got[1].ID {
		t.Fatalf("after a's death Fetch = %+v, %v; want job 0 and 1 again", taken, err)
	}
	if err := b.Ack(ctx, "crew", "m1", taken[0].ID, taken[1].ID); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if rest, err := a.Fetch(ctx, "crew", "m1", 10); err != nil || len(rest) != 0 {
		t.Fatalf("confirmed mail fetched again: %+v, %v", rest, err)
	}
}

// TestMailboxCarriesMessagesLargerThanTheBuffers: a message many times the
// connections' 4 KiB buffers goes through Send, the pipelined Read and its
// repeat (read back from the stored batch) intact.
func TestMailboxCarriesMessagesLargerThanTheBuffers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s := openStore(t, redistest.URL(t), redistest.Prefix(t))
	text := strings.Repeat("0123456789abcdef", 16<<10) // 256 KiB
	if _, err := s.Send(ctx, "crew", teams.MailMessage{From: "lead", To: "m1", Text: text}); err != nil {
		t.Fatal(err)
	}
	for _, attempt := range []string{"read", "repeated read"} {
		msgs, err := s.Read(ctx, "crew", "m1", "read-1", 10)
		if err != nil {
			t.Fatalf("%s: %v", attempt, err)
		}
		if len(msgs) != 1 || msgs[0].Text != text {
			t.Fatalf("%s: got %d messages (first %d bytes), want the one of %d bytes", attempt, len(msgs), firstLen(msgs), len(text))
		}
	}
}

func firstLen(msgs []teams.MailMessage) int {
	if len(msgs) == 0 {
		return 0
	}
	return len(msgs[0].Text)
}
