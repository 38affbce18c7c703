package main

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"testing"

	"github.com/switchboard-chat/switchboard/agentcore/llmtest"
	"github.com/switchboard-chat/switchboard/channels/channeltest"
)

// The harness of the kill -9 media tests: a daemon that can be killed and
// started again on the same stores, and pictures that do not fit in the
// sockets' buffers, so that a kill leaves an upload half sent.

// mediaDaemon is a daemon with every media model on and the media tools
// allowed (mediaConfig), against the fake LLM and a chat platform's fake,
// that a test may kill and start again on the same stores.
type mediaDaemon struct {
	llm       *llmtest.Server
	env       map[string]string
	dir, addr string
	d         *daemonProc
}

// startMediaDaemon starts a mediaDaemon; platform points its env at the
// chat platform's fake.
func startMediaDaemon(ctx context.Context, t *testing.T, platform func(env map[string]string)) *mediaDaemon {
	t.Helper()
	e := &mediaDaemon{llm: llmtest.NewServer(), dir: t.TempDir(), addr: freeAddr(t)}
	t.Cleanup(e.llm.Close)
	e.env = externalEnv(t, nil, e.llm, e.addr)
	withMediaModels(e.env)
	platform(e.env)
	writeConfig(t, e.dir, mediaConfig)
	e.restart(ctx, t)
	return e
}

// restart starts the daemon again on the same stores and configuration
// (the previous one must have stopped) and waits until it is ready.
func (e *mediaDaemon) restart(ctx context.Context, t *testing.T) {
	t.Helper()
	e.d = startDaemon(t, e.dir, e.addr, e.env)
	e.d.waitReady(ctx)
}

// bigNoisyPNG is a picture larger than what loopback sockets buffer, so
// that a client killed while uploading it dies with bytes unsent.
func bigNoisyPNG(t *testing.T, seed uint64) []byte {
	t.Helper()
	return noisyPNG(t, 1100, 1100, seed)
}

// killMidUpload waits until st stopped the upload, kills the daemon
// (-9), starts a new one and releases the stalled upload, which must
// then fail: the dead daemon never sent its last bytes.
func killMidUpload(ctx context.Context, t *testing.T, e *mediaDaemon, st *channeltest.Stall) {
	t.Helper()
	select {
	case <-st.Reached():
	case <-ctx.Done():
		t.Fatal("the picture's upload never began")
	}
	e.d.kill9()
	e.restart(ctx, t)
	st.Release()
	select {
	case <-st.Finished():
	case <-ctx.Done():
		t.Fatal("the released upload never ended")
	}
	if st.Err() == nil {
		t.Fatal("the killed daemon's upload arrived whole; the test needs a picture larger than the sockets buffer")
	}
}

// noisyPNG is a w×h PNG of random pixels (from seed): it does not
// compress, so its upload takes many writes.
func noisyPNG(t *testing.T, w, h int, seed uint64) []byte {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{R: uint8(r.UintN(256)), G: uint8(r.UintN(256)), B: uint8(r.UintN(256)), A: 255})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
