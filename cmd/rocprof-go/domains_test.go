package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/domain"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/pipeline"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// A new domain is one row of the domain table (internal/domain): --echo
// shows its switch, and the end-of-run report names it when it recorded
// nothing, with its row's hint. (Its option, expansion and variable are
// internal/options' test; its loss, internal/pipeline's; its C bit and docs
// row, internal/cmd/gendomain's.)
func TestANewDomainReachesEchoAndTheReport(t *testing.T) {
	fake := domain.Switch{Option: "fake_trace", Env: "ROCPROF_FAKE_API_TRACE", ReadBy: domain.Preload, Bit: 13, C: "FAKE",
		Status: domain.NoBit, CollectedBy: domain.Preload, Outputs: []string{"FAKE_API"}, Aggregates: []string{"sys_trace"},
		Report: "--fake-trace", Empty: ": the app made no fake call", Help: "fake API"}
	defer options.WithDomain(fake)()
	cl, err := options.ParseArgs([]string{"--sys-trace", "--", "./app"})
	require.NoError(t, err)
	plan, err := options.Resolve(cl, options.Sources{LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)

	require.Contains(t, tracingSwitches(plan.Passes[0]), tracingSwitch{"fake-trace", true})
	require.Equal(t, "1", plan.Passes[0].ToolEnv("/o")["ROCPROF_FAKE_API_TRACE"])

	m := &rocprof.Manifest{DomainRecords: map[string]int64{"KERNEL_DISPATCH": 1, "HIP_API": 1, "HSA_API": 1, "MARKER_API": 1,
		"MEMORY_COPY": 1, "MEMORY_ALLOCATION": 1, "SCRATCH_MEMORY": 1, "RCCL_API": 1}, Files: []rocprof.ManifestFile{}}
	var b strings.Builder
	writeReport(&b, plan, &pipeline.Result{Dir: t.TempDir(), Manifest: m})
	require.Contains(t, b.String(), "rocprof-go: note: --fake-trace recorded nothing (no FAKE_API records): the app made no fake call\n")
	require.Equal(t, 1, strings.Count(b.String(), "recorded nothing"), b.String())
}

// The report's notes come from the domain table, grouped by the option it
// names: --hip-trace for both HIP domains, --hsa-trace for the four HSA
// ones; --rccl-trace's empty domain is a note too.
func TestReportNotesFromTheDomainTable(t *testing.T) {
	cl, err := options.ParseArgs([]string{"--hip-compiler-trace", "--hsa-image-trace", "--rccl-trace", "--", "./app"})
	require.NoError(t, err)
	plan, err := options.Resolve(cl, options.Sources{LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	var got []string
	for _, d := range emptyDomains(plan, &rocprof.Manifest{DomainRecords: map[string]int64{}}) {
		got = append(got, d.option+" "+d.domain)
	}
	require.Equal(t, []string{"--hsa-trace HSA_API", "--hip-trace HIP_API", "--rccl-trace RCCL_API"}, got)
}
