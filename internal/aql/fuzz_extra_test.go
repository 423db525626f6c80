package aql

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseAgent feeds --virtual-gpu / counter agent strings
// ("gfx90a:xcc=1,se=8,cu=104,sa=1") to the parser: bad input is an error,
// never a panic, and what parses is bound to an architecture's block table.
func FuzzParseAgent(f *testing.F) {
	for _, s := range []string{"gfx90a", "gfx90a:xcc=1,se=8,cu=104,sa=1", "gfx908:se=4", "gfx1030", "gfx90a:", "gfx90a:se", ":", "gfx90a:cu=0", "gfx90a:se=99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseAgent(s)
		if err != nil {
			return
		}
		require.NotNil(t, d.Table)
		require.NotEmpty(t, d.GfxIP)
	})
}
