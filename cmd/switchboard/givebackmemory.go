package main

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"strings"
)

// giveBackMemory returns the heap's free pages to the operating system
// (debug.FreeOSMemory) and lets go of the binary's pages mapped since the
// last time (unmapBinaryPages), then logs msg at debug level with where the
// runtime's memory is. It runs once start-up is over
// (releaseStartupMemory) and then once a minute while the daemon is idle
// (trimWhileIdle).
func (d *daemon) giveBackMemory(ctx context.Context, msg string) {
	debug.FreeOSMemory()
	code, err := unmapBinaryPages()
	if err != nil {
		// Harmless: the pages stay mapped, as they would without this.
		d.log.Debug("binary pages not unmapped", "err", err)
	}
	d.logMemory(ctx, msg, "code_unmapped_bytes", code)
}

// memoryClasses are the runtime's figures logMemory reports.
var memoryClasses = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/stacks:bytes",
	"/memory/classes/heap/released:bytes",
	"/memory/classes/metadata/other:bytes",
	"/memory/classes/other:bytes",
}

// logMemory logs msg at debug level with attrs and where the runtime's
// memory is (runtime/metrics: reading them does not stop the world).
func (d *daemon) logMemory(ctx context.Context, msg string, attrs ...any) {
	if !d.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	samples := make([]metrics.Sample, len(memoryClasses))
	for i, name := range memoryClasses {
		samples[i].Name = name
	}
	metrics.Read(samples)
	for _, s := range samples {
		if s.Value.Kind() == metrics.KindUint64 {
			name := strings.TrimSuffix(strings.TrimPrefix(s.Name, "/memory/classes/"), ":bytes")
			attrs = append(attrs, strings.ReplaceAll(name, "/", "_")+"_bytes", s.Value.Uint64())
		}
	}
	d.log.Debug(msg, attrs...)
}
