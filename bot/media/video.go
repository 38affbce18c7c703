package media

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"time"
)

// ErrNoFFmpeg is returned when ffmpeg (with ffprobe) is not installed.
var ErrNoFFmpeg = errors.New("videos cannot be read here: install ffmpeg to read videos")

// Video reading limits: each ffmpeg run is stopped after videoTimeout; a
// frame is a JPEG at most maxFrameWidth wide and maxFrameBytes long; the
// sound sent to be transcribed is at most maxSoundBytes (OpenAI's limit for
// one transcription; at 24 kbit/s about two hours).
const (
	maxSoundBytes = 25 << 20
	videoTimeout  = 2 * time.Minute
	maxFrameBytes = 5 << 20
	maxFrameWidth = 1024
	videoFrames   = 4
)

// videoInfo is what ffprobe tells of a video.
type videoInfo struct {
	Duration float64 // seconds; 0 when unknown
	HasAudio bool
	HasVideo bool
}

// ffmpegTools returns the paths of ffmpeg and ffprobe, or ErrNoFFmpeg.
func ffmpegTools() (ffmpeg, ffprobe string, err error) {
	ffmpeg, err1 := exec.LookPath("ffmpeg")
	ffprobe, err2 := exec.LookPath("ffprobe")
	if err1 != nil || err2 != nil {
		return "", "", ErrNoFFmpeg
	}
	return ffmpeg, ffprobe, nil
}

// probeVideo asks ffprobe for f's length and streams.
func probeVideo(ctx context.Context, ffprobe string, f *os.File) (videoInfo, error) {
	out, err := runHelper(ctx, ffprobe, []string{"-v", "error", "-show_entries", "format=duration:stream=codec_type",
		"-of", "json", "/dev/fd/3"}, f, 1<<20)
	if err != nil {
		return videoInfo{}, fmt.Errorf("this video cannot be read (ffprobe: %w); it may be damaged or not a video", err)
	}
	var probe struct {
		Format  struct{ Duration string }
		Streams []struct {
			CodecType string `json:"codec_type"`
		}
	}
	if err := json.Unmarshal(out, &probe); err != nil {
		return videoInfo{}, fmt.Errorf("ffprobe answered something unexpected: %w", err)
	}
	var info videoInfo
	info.Duration, _ = strconv.ParseFloat(probe.Format.Duration, 64)
	for _, s := range probe.Streams {
		info.HasAudio = info.HasAudio || s.CodecType == "audio"
		info.HasVideo = info.HasVideo || s.CodecType == "video"
	}
	return info, nil
}

// videoFrame returns the frame at second at of f, as a JPEG.
func videoFrame(ctx context.Context, ffmpeg string, f *os.File, at float64) ([]byte, error) {
	return runHelper(ctx, ffmpeg, []string{"-nostdin", "-v", "error", "-ss", strconv.FormatFloat(at, 'f', 3, 64),
		"-i", "/dev/fd/3", "-frames:v", "1", "-vf", fmt.Sprintf("scale='min(%d,iw)':-2", maxFrameWidth),
		"-f", "image2pipe", "-c:v", "mjpeg", "pipe:1"}, f, maxFrameBytes)
}

// videoSound streams f's sound as Ogg Opus (small, and what transcription
// servers take) to consume, at most maxBytes of it; cut reports whether
// the sound was longer than that.
func videoSound(ctx context.Context, ffmpeg string, f *os.File, maxBytes int64, consume func(io.Reader) error) (cut bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, videoTimeout)
	defer cancel()
	cmd := helperCommand(ctx, ffmpeg, []string{"-nostdin", "-v", "error", "-i", "/dev/fd/3", "-vn", "-ac", "1",
		"-c:a", "libopus", "-b:a", "24k", "-f", "ogg", "pipe:1"}, f)
	var stderr bytes.Buffer
	cmd.Stderr = &capped{w: &stderr, left: maxToolStderr}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return false, err
	}
	if err := cmd.Start(); err != nil {
		return false, fmt.Errorf("start ffmpeg: %w", err)
	}
	limited := &io.LimitedReader{R: out, N: maxBytes}
	consumeErr := consume(limited)
	cut = limited.N == 0
	cancel() // whatever was not read is not needed
	waitErr := cmd.Wait()
	switch {
	case consumeErr != nil:
		return cut, consumeErr
	case waitErr != nil && !cut && ctx.Err() == nil:
		return false, fmt.Errorf("ffmpeg: %s", firstLine(stderr.String(), waitErr))
	}
	return cut, nil
}

// runHelper runs a helper program on f and returns its output, at most
// limit bytes, stopping it after videoTimeout.
func runHelper(ctx context.Context, bin string, args []string, f *os.File, limit int64) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, videoTimeout)
	defer cancel()
	cmd := helperCommand(ctx, bin, args, f)
	var stdout, stderr bytes.Buffer
	out := &capped{w: &stdout, left: int(limit)}
	cmd.Stdout = out
	cmd.Stderr = &capped{w: &stderr, left: maxToolStderr}
	err := cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("took longer than %s", videoTimeout)
	case err != nil:
		return nil, errors.New(firstLine(stderr.String(), err))
	case out.over:
		return nil, fmt.Errorf("its output is larger than %s", HumanSize(limit))
	}
	return stdout.Bytes(), nil
}

// clock writes seconds as "0:42" or "1:02:03".
func clock(seconds float64) string {
	s := int(seconds + 0.5)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}
