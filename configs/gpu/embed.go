package gpudata

import "embed"

//go:generate go run ../../internal/cmd/genconfigs -shared ../../../shared -out .

// Files holds arch/<label>.json and counters.json.
//
//go:embed arch/*.json counters.json
var Files embed.FS
