package main

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
)

// --echo says what a record will take on disk in each format asked for
// (issue 43: disk use is predictable), from the measured figures of
// docs/performance.md.
func TestEchoEstimatesOutputBytes(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	r := runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "--hip-trace", "-f", "csv", "pftrace", "--echo", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "  output bytes per record (API call / kernel dispatch): csv 76 / 158, pftrace 150 / 220\n")
}
