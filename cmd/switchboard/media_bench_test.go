package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/telegram/telegramtest"
)

// benchFileBytes is the benchmark's file: media.max_bytes' default, the
// largest file Telegram lets a bot download.
const benchFileBytes = 20_000_000

// uploadPoll is how often the fake is asked whether the upload is in, so
// out-ms is at most this much late.
const uploadPoll = 2 * time.Millisecond

// BenchmarkMedia20MB measures the built daemon (`switchboard serve`, the
// external PostgreSQL and Redis, the Telegram fake, the scripted LLM)
// taking a 20 MB document in and sending it back out: a person sends it,
// the model answers by calling send_file on inbox/<name>, and the
// iteration ends when the fake has received the whole sendDocument
// upload (its size and SHA-256 checked). Each iteration sends new bytes
// (a PRNG stream: incompressible), so no step finds the file stored
// already. "bin" is an octet stream, so the run is about moving bytes;
// "txt" is printable text, so the daemon also reads its first 20 000
// characters for the model.
//
// Memory is the daemon's, from /proc/<pid>/status: idle-rss-MB is VmRSS
// after idleFor with nothing sent; before each file the peak (VmHWM) is
// reset through /proc/<pid>/clear_refs, so peak-rss-MB is the most the
// daemon held during that file (in-peak-rss-MB and out-peak-rss-MB split
// it where the model is asked about the file), and peak-above-idle-MB is
// that less the idle figure. ratio is peak-above-idle over the file's
// size: issue 50's goal is at most 2, and a file above it fails the
// benchmark, since that is a file held whole, not a slow machine. in-ms runs from the person's send to the model's
// request naming the file in the inbox; out-ms from the model's send_file
// call to the upload's last byte at the fake.
func BenchmarkMedia20MB(b *testing.B) {
	for _, kind := range []struct {
		name string
		text bool
	}{{"bin", false}, {"txt", true}} {
		b.Run(kind.name, func(b *testing.B) { benchMediaRoundTrip(b, kind.name, kind.text) })
	}
}

// benchMediaRoundTrip runs BenchmarkMedia20MB for files with extension ext
// on one daemon; each file has a name of its own, so none lands as
// "name (2).ext" beside the one before.
func benchMediaRoundTrip(b *testing.B, ext string, text bool) {
	r := startMediaBench(b)
	time.Sleep(idleFor)
	idle := r.p.memoryMB(b)["VmRSS"]
	var runs []mediaRun
	// roundTrip times only the round trips, not making the files.
	b.ResetTimer()
	b.StopTimer()
	for i := range b.N {
		runs = append(runs, r.roundTrip(b, i, fmt.Sprintf("big-%d.%s", i, ext), text))
	}
	reportMedia(b, ext, idle, runs)
}

// mediaBench is one daemon on the fakes, for BenchmarkMedia20MB.
type mediaBench struct {
	p     *servedProc
	tg    *telegramtest.Server
	brain *sendBackBrain
}

// mediaChat is the private chat the files come in and go out in.
const mediaChat = 5151

// startMediaBench starts the fakes and the daemon and waits until it is
// ready.
func startMediaBench(b *testing.B) *mediaBench {
	tg := telegramtest.NewServer(testToken)
	b.Cleanup(tg.Close)
	llm := llmtest.NewServer()
	b.Cleanup(llm.Close)
	brain := &sendBackBrain{seen: make(chan seenFile, 1), called: make(chan time.Time, 1)}
	llm.Handle(brain.reply)
	dir := b.TempDir()
	// send_file posts to the chat (mutating): allowed here, so no person
	// has to press Allow during the measurement.
	if err := os.WriteFile(filepath.Join(dir, "switchboard.yaml"), []byte("tools:\n  approvals: {mutating: allow}\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	env := benchEnv(b, tg, llm)
	// A warm-up start applies the migrations, so the measured daemon is
	// one restarted on its schema, as in production: a first start's
	// migrations leave the heap's GC goal high until the next collection.
	warm := startServe(b, dir, env)
	warm.untilReady(b, time.Now())
	warm.stop(b)
	p := startServe(b, dir, env)
	p.untilReady(b, time.Now())
	brain.pid = p.cmd.Process.Pid
	return &mediaBench{p: p, tg: tg, brain: brain}
}

// mediaRun is what one file's round trip measured.
type mediaRun struct {
	inPeakMB, outPeakMB float64 // the daemon's VmHWM on the way in, and out
	in, out             time.Duration
}

// roundTrip sends file i, named name, and waits until the fake has
// received it back whole. Only the round trip itself is timed.
func (r *mediaBench) roundTrip(b *testing.B, i int, name string, text bool) mediaRun {
	body := benchFile(uint64(i), text)
	want := sha256.Sum256(body)
	id := fmt.Sprintf("big%d", i)
	r.tg.AddFile(id, name, body)
	body = nil // the fake has its copy; this process's memory is not measured
	declared := "application/octet-stream"
	if text {
		declared = "text/plain"
	}
	before := len(r.tg.Uploads(mediaChat))
	if err := resetPeak(r.p.cmd.Process.Pid); err != nil {
		b.Fatal(err)
	}
	b.StartTimer()
	sent := time.Now()
	r.tg.SendMedia(mediaChat, mediaChat, "send it back", telegramtest.Media{Kind: "document", FileID: id, FileName: name,
		MimeType: declared, Size: benchFileBytes})
	seen := r.brain.waitSeen(b, r.p)
	called := r.brain.waitCalled(b, r.p)
	up, got := waitUpload(b, r.tg, mediaChat, before, r.p)
	b.StopTimer()
	run := mediaRun{inPeakMB: seen.peakMB, outPeakMB: r.p.memoryMB(b)["VmHWM"], in: seen.at.Sub(sent), out: got.Sub(called)}
	if up.Size != benchFileBytes || up.SHA256 != hex.EncodeToString(want[:]) || up.FileName != name {
		b.Fatalf("upload %d: %s %q, %d bytes, sha256 %s; want sendDocument %q, %d bytes, sha256 %x",
			i, up.Method, up.FileName, up.Size, up.SHA256, name, benchFileBytes, want)
	}
	return run
}

// reportMedia reports the runs' means against the idle RSS.
func reportMedia(b *testing.B, ext string, idle float64, runs []mediaRun) {
	var peak, inPeak, outPeak, inMS, outMS []float64
	for _, r := range runs {
		inPeak, outPeak = append(inPeak, r.inPeakMB), append(outPeak, r.outPeakMB)
		peak = append(peak, max(r.inPeakMB, r.outPeakMB))
		inMS, outMS = append(inMS, ms(r.in)), append(outMS, ms(r.out))
	}
	const fileMB = benchFileBytes / 1e6
	above := mean(peak) - idle
	b.ReportMetric(idle, "idle-rss-MB")
	b.ReportMetric(mean(peak), "peak-rss-MB")
	b.ReportMetric(mean(inPeak), "in-peak-rss-MB")
	b.ReportMetric(mean(outPeak), "out-peak-rss-MB")
	b.ReportMetric(above, "peak-above-idle-MB")
	b.ReportMetric(above/fileMB, "ratio")
	b.ReportMetric(mean(inMS), "in-ms")
	b.ReportMetric(mean(outMS), "out-ms")
	b.Logf("%s: idle RSS %.1f MB; peak RSS MB per file in %.1f, out %.1f; in-ms %.0f; out-ms %.0f", ext, idle, inPeak, outPeak, inMS, outMS)
}

// benchFile is benchFileBytes from a PRNG seeded with seed: raw bytes, or
// printable lines when text.
func benchFile(seed uint64, text bool) []byte {
	var key [32]byte
	key[0], key[1] = byte(seed), byte(seed>>8)
	body := make([]byte, benchFileBytes)
	_, _ = rand.NewChaCha8(key).Read(body)
	if text {
		const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,;"
		for i, c := range body {
			body[i] = letters[int(c)%len(letters)]
			if i%80 == 79 {
				body[i] = '\n'
			}
		}
	}
	return body
}

// sendBackBrain is the scripted model: a user message naming an inbox file
// is answered by send_file on that file; the tool's result by "sent". It
// reports when it saw the file, with the daemon's peak RSS until then
// (the peak is reset for the way out: the daemon waits for this answer, so
// nothing is in flight), and when it made the call.
type sendBackBrain struct {
	pid    int // the daemon's
	seen   chan seenFile
	called chan time.Time
	mu     sync.Mutex
}

// seenFile is the moment the model is asked about the file.
type seenFile struct {
	at     time.Time
	peakMB float64 // the daemon's VmHWM then
	err    error   // reading or resetting it failed
}

// reply answers one chat request.
func (s *sendBackBrain) reply(r llmtest.Request) llmtest.Reply {
	s.mu.Lock()
	defer s.mu.Unlock()
	last := r.Messages[len(r.Messages)-1]
	if last.Role == "tool" {
		return llmtest.Reply{Text: "sent"}
	}
	_, rest, ok := strings.Cut(last.Content, "[attachment: ")
	path, _, _ := strings.Cut(rest, ",")
	if last.Role != "user" || !ok || !strings.HasPrefix(path, "inbox/") {
		return llmtest.Reply{Text: "nothing to send"}
	}
	at := time.Now()
	mem, err := procMemoryMB(s.pid)
	if err == nil {
		err = resetPeak(s.pid)
	}
	// A request the benchmark does not wait for (a redelivery) must not
	// block the model: a full channel drops the report.
	select {
	case s.seen <- seenFile{at: at, peakMB: mem["VmHWM"], err: err}:
	default:
	}
	args := fmt.Sprintf(`{"path": %q}`, path)
	defer func() {
		select {
		case s.called <- time.Now():
		default:
		}
	}()
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "send_file", Arguments: args}}}
}

// waitSeen waits until the model is asked about the file.
func (s *sendBackBrain) waitSeen(b *testing.B, p *servedProc) seenFile {
	b.Helper()
	select {
	case f := <-s.seen:
		if f.err != nil {
			b.Fatal(f.err)
		}
		return f
	case <-time.After(2 * time.Minute):
		b.Fatalf("the model was not asked about the file within 2m:\n%s", p.out.String())
	}
	return seenFile{}
}

// waitCalled waits until the model has called send_file.
func (s *sendBackBrain) waitCalled(b *testing.B, p *servedProc) time.Time {
	b.Helper()
	select {
	case at := <-s.called:
		return at
	case <-time.After(2 * time.Minute):
		b.Fatalf("the model did not call send_file within 2m:\n%s", p.out.String())
	}
	return time.Time{}
}

// waitUpload waits until chat has more than before uploads and returns
// the new one and when it was seen.
func waitUpload(b *testing.B, tg *telegramtest.Server, chat int64, before int, p *servedProc) (telegramtest.Upload, time.Time) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := tg.WaitRequests(ctx, "sendDocument", before+1); err != nil {
		b.Fatalf("no sendDocument within 2m: %v\n%s", err, p.out.String())
	}
	for {
		if ups := tg.Uploads(chat); len(ups) > before {
			return ups[before], time.Now()
		}
		select {
		case <-ctx.Done():
			b.Fatalf("sendDocument began but no upload was recorded within 2m:\n%s", p.out.String())
		case <-time.After(uploadPoll):
		}
	}
}

// resetPeak resets process pid's VmHWM to its VmRSS now ("5" to
// /proc/<pid>/clear_refs, Linux), and checks that it did.
func resetPeak(pid int) error {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
		return fmt.Errorf("reset the daemon's peak RSS: %w", err)
	}
	m, err := procMemoryMB(pid)
	if err != nil {
		return err
	}
	if m["VmHWM"] > m["VmRSS"]+1 {
		return fmt.Errorf("VmHWM %.1f MB is still above VmRSS %.1f MB after clear_refs: this kernel does not reset it", m["VmHWM"], m["VmRSS"])
	}
	return nil
}

// ms is d in milliseconds.
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
