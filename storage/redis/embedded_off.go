//go:build noembedded

package redis

import (
	"errors"
	"log/slog"
)

// ErrNoEmbedded is returned by StartEmbedded and StartEmbeddedFor in a
// build without the in-process Redis (-tags noembedded, the container
// image's: miniredis and its Lua interpreter are 0.9 MB of the binary).
var ErrNoEmbedded = errors.New("this switchboard was built without the in-process Redis (-tags noembedded); set redis.url (SWITCHBOARD_REDIS_URL)")

// Embedded stands in for the in-process Redis, which this build lacks.
type Embedded struct{}

// StartEmbeddedFor returns ErrNoEmbedded.
func StartEmbeddedFor(EmbeddedOptions) (*Embedded, error) { return nil, ErrNoEmbedded }

// StartEmbedded returns ErrNoEmbedded.
func StartEmbedded(*slog.Logger) (*Embedded, error) { return nil, ErrNoEmbedded }

// URL returns "".
func (e *Embedded) URL() string { return "" }

// Close does nothing.
func (e *Embedded) Close() {}

// String says there is no in-process Redis.
func (e *Embedded) String() string { return "no in-process redis (built with -tags noembedded)" }
