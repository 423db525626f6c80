package duckdb

import "embed"

// payload holds the engine make build compressed for the CLI to embed
// (payload/README.md).
//
//go:embed payload
var payload embed.FS

// EmbeddedName is the engine's compressed file in the payload.
const EmbeddedName = Name + ".gz"

// Embedded is the gzip-compressed engine this binary carries, or nil.
func Embedded() []byte {
	b, err := payload.ReadFile("payload/" + EmbeddedName)
	if err != nil {
		return nil
	}
	return b
}
