package format

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNamesAreAllOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names() {
		require.False(t, seen[n], "%s is listed twice", n)
		seen[n] = true
	}
	require.Equal(t, []string{"csv", "json", "pftrace", "otf2", "rocpd", "parquet"}, Names())
	require.True(t, Perfetto.Is("PFTRACE"))
	require.False(t, Perfetto.Is("json"))
}
