package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/hipapi"
	"github.com/rocprof-go/rocprof-go/internal/hsaapi"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// A spool whose string records are missing (its process died before
// writing them) still names its HIP and HSA calls through the CLI: the
// function tables are linked into the binary that writes the outputs (once
// they were only registered by a package the CLI did not import, and calls
// came out as HIP_RUNTIME_API_EXT_function_N).
func TestCallsAreNamedWithoutTheSpoolsStrings(t *testing.T) {
	in := t.TempDir()
	b := spooltest.New(tracing.ProcessInfo{PID: 4242, PPID: 1, Hostname: "h", Argv: []string{"app"}, StartBoottimeNs: 1})
	b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 3, TID: 4242, CorrelationID: 1, Start: 10, End: 20})
	b.Add(tracing.APICall{Domain: tracing.DomainHSACore, Function: 2, TID: 4242, CorrelationID: 2, Start: 30, End: 40})
	_, err := b.WriteFile(in)
	require.NoError(t, err)
	out := t.TempDir()
	r := runCLI(t, nil, "convert", "-i", in, "-f", "csv", "-d", out, "-o", "run", "-q")
	require.Equal(t, 0, r.code, r.stderr)
	hip, _ := hipapi.FunctionName(3)
	data, err := os.ReadFile(filepath.Join(out, "run_hip_api_trace.csv"))
	require.NoError(t, err)
	require.Contains(t, string(data), `"`+hip+`"`)
	data, err = os.ReadFile(filepath.Join(out, "run_hsa_api_trace.csv"))
	require.NoError(t, err)
	require.Contains(t, string(data), `"`+hsaapi.CoreFunctions[2]+`"`)
	require.False(t, strings.Contains(string(data), "_function_"), "%s", data)
}
