package rocprof_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// An app that initialises HSA without the shim (here a launcher that drops
// HSA_TOOLS_LIB, as a scrubbed environment would): the kernel trace cannot
// be collected. The run says so, lists the domains in run.json's
// lost_domains, and fails although the app succeeded; what could be
// collected (the HIP calls) is written.
func TestDomainsLostWithoutTheShimFailTheRun(t *testing.T) {
	libEnv(t)
	out := t.TempDir()
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--kernel-trace", "--hip-runtime-trace", "-f", "csv", "-d", out, "-o", "run"},
	}, []string{"env", "-u", "HSA_TOOLS_LIB", filepath.Join(buildDir(), "testdata", "multistream"), "1", "1"})
	var lost *rocprof.LostDomainsError
	require.True(t, errors.As(err, &lost), "err: %v", err)
	require.Equal(t, 0, res.ExitStatus, "the app itself succeeded")
	require.Len(t, lost.Lost, 1)
	require.Equal(t, []string{"kernel_trace"}, lost.Lost[0].Domains)
	require.Contains(t, lost.Lost[0].Reason, "HSA_TOOLS_LIB")
	require.Contains(t, err.Error(), "kernel_trace")

	m, err := rocprof.LoadManifest(res.Dir)
	require.NoError(t, err)
	require.Equal(t, lost.Lost, m.LostDomains)
	var hip bool
	for _, f := range m.Files {
		hip = hip || strings.HasSuffix(f.Path, "hip_api_trace.csv") && f.Records > 0
		require.False(t, strings.HasSuffix(f.Path, "kernel_trace.csv"), "no kernel trace can have been written")
	}
	require.True(t, hip, "the HIP calls were recorded: %+v", m.Files)
}

// With the shim in place, nothing is reported lost.
func TestNoDomainLostWithTheShim(t *testing.T) {
	libEnv(t)
	res, err := rocprof.Run(context.Background(), rocprof.Options{
		Args: []string{"--virtual-gpu", "--sys-trace", "-f", "csv", "-d", t.TempDir(), "-o", "run"},
	}, []string{filepath.Join(buildDir(), "testdata", "multistream"), "1", "1"})
	require.NoError(t, err)
	require.Equal(t, 0, res.ExitStatus)
	require.Empty(t, res.Manifest.LostDomains)
}
