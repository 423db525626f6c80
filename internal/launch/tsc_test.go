package launch

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTSCInvariantFromCPUInfo(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "cpuinfo")
		require.NoError(t, os.WriteFile(p, []byte(body), 0o600))
		return p
	}
	require.Equal(t, "1", tscInvariantFrom(write("processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good nonstop_tsc cpuid\n")))
	require.Equal(t, "0", tscInvariantFrom(write("processor\t: 0\nflags\t\t: fpu tsc constant_tsc rep_good\n")))
	require.Equal(t, "", tscInvariantFrom(write("processor\t: 0\nFeatures\t: fp asimd\n")), "no x86 flags line: let the library decide")
	require.Equal(t, "", tscInvariantFrom(filepath.Join(dir, "missing")))
}
