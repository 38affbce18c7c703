package mcptest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fixed resources' URIs and contents.
const (
	// ReadmeURI is a short text resource whose text is ReadmeText, which
	// holds a credential (ReadmeSecret) a scrubber must remove.
	ReadmeURI    = "mcptest://notes/readme"
	ReadmeSecret = "AKIAMCPTESTEXAMPLE00"
	ReadmeText   = "mcptest notes: the deploy runs at 09:00 UTC; its key is " + ReadmeSecret + "."
	// LogoURI is a binary resource (image/png) of LogoSize bytes.
	LogoURI  = "mcptest://images/logo.png"
	LogoSize = 2048
	// BigURI is a text resource of BigSize bytes, more than a tool result
	// holds.
	BigURI  = "mcptest://notes/big"
	BigSize = 100 << 10
	// BrokenURI is listed, but reading it fails with BrokenError.
	BrokenURI   = "mcptest://notes/broken"
	BrokenError = "disk on fire"
)

// addResources adds the fixed resources and extra small text ones; the
// server lists them by URI.
func addResources(s *sdk.Server, extra int) {
	text := func(uri, mime, body string) sdk.ResourceHandler {
		return func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: uri, MIMEType: mime, Text: body}}}, nil
		}
	}
	s.AddResource(&sdk.Resource{URI: ReadmeURI, Name: "readme", MIMEType: "text/plain", Description: "the team's notes"},
		text(ReadmeURI, "text/plain", ReadmeText))
	logo := make([]byte, LogoSize)
	copy(logo, "\x89PNG\r\n\x1a\n")
	s.AddResource(&sdk.Resource{URI: LogoURI, Name: "logo", MIMEType: "image/png", Size: LogoSize},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: LogoURI, MIMEType: "image/png", Blob: logo}}}, nil
		})
	s.AddResource(&sdk.Resource{URI: BigURI, Name: "big", MIMEType: "text/plain"},
		text(BigURI, "text/plain", strings.Repeat("0123456789abcdef", BigSize/16)))
	s.AddResource(&sdk.Resource{URI: BrokenURI, Name: "broken"},
		func(context.Context, *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
			return nil, errors.New(BrokenError)
		})
	for i := range extra {
		uri := ExtraURI(i)
		s.AddResource(&sdk.Resource{URI: uri, Name: "extra " + strconv.Itoa(i), MIMEType: "text/plain"},
			text(uri, "text/plain", "extra "+strconv.Itoa(i)))
	}
}

// ExtraURI is the URI of extra resource i (Options.ExtraResources); they
// sort in the order of i.
func ExtraURI(i int) string { return fmt.Sprintf("mcptest://extra/%04d", i) }
