package options

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

func testdata(name string) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "input", name)
}

func noEnv(string) (string, bool) { return "", false }

func resolve(t *testing.T, args ...string) *Plan {
	t.Helper()
	cl, err := ParseArgs(args)
	require.NoError(t, err)
	plan, err := Resolve(cl, Sources{LookupEnv: noEnv})
	require.NoError(t, err)
	return plan
}

func TestBoolSpellings(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want Tri
	}{
		{[]string{"--kernel-trace", "--", "app"}, True},
		{[]string{"--kernel-trace=no", "--", "app"}, False},
		{[]string{"--kernel-trace", "false", "--", "app"}, False},
		{[]string{"--kernel-trace", "FALSE", "--", "app"}, False},
		{[]string{"--kernel-trace", "1", "--", "app"}, True},
		{[]string{"--kernel-trace=On", "--", "app"}, True},
		{[]string{"--kernel-trace", "app"}, True},
	} {
		cl, err := ParseArgs(tc.args)
		require.NoError(t, err, tc.args)
		require.Equal(t, tc.want, cl.Config.KernelTrace, tc.args)
		require.Equal(t, "app", cl.App[0], tc.args)
	}
	_, err := ParseArgs([]string{"--kernel-trace=maybe", "--", "app"})
	var ue *UsageError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, err.Error(), "--kernel-trace")
}

func TestAggregateNegation(t *testing.T) {
	p := resolve(t, "--sys-trace", "--hsa-trace=no", "--", "true")
	c := p.Passes[0]
	require.False(t, c.HsaCoreTrace.On())
	require.False(t, c.HsaAmdTrace.On())
	require.False(t, c.HsaImageTrace.On())
	require.False(t, c.HsaFinalizerTrace.On())
	for _, on := range []Tri{c.HipRuntimeTrace, c.HipCompilerTrace, c.MarkerTrace, c.KernelTrace,
		c.MemoryCopyTrace, c.MemoryAllocationTrace, c.ScratchMemoryTrace} {
		require.True(t, on.On())
	}
	env := c.ToolEnv("/out")
	require.NotContains(t, env, "ROCPROF_HSA_CORE_API_TRACE")
	require.Equal(t, "1", env["ROCPROF_KERNEL_TRACE"])

	// An explicit granular option survives a negated group.
	c = resolve(t, "--hsa-trace=0", "--hsa-core-trace=1", "--", "true").Passes[0]
	require.True(t, c.HsaCoreTrace.On())
	require.False(t, c.HsaAmdTrace.On())

	// --runtime-trace does not switch on the HIP compiler API or HSA.
	c = resolve(t, "-r", "--", "true").Passes[0]
	require.True(t, c.HipRuntimeTrace.On())
	require.False(t, c.HipCompilerTrace.On())
	require.False(t, c.HsaCoreTrace.On())
}

func TestListOptionsTakeSeveralWords(t *testing.T) {
	cl, err := ParseArgs([]string{"--pmc", "SQ_WAVES", "GRBM_COUNT", "-f", "CSV", "json,pftrace", "-T", "--", "./app", "-x"})
	require.NoError(t, err)
	require.Equal(t, []string{"SQ_WAVES", "GRBM_COUNT"}, cl.Config.Pmc)
	require.Equal(t, []string{"csv", "json", "pftrace"}, cl.Config.OutputFormat)
	require.True(t, cl.Config.TruncateKernels.On())
	require.Equal(t, []string{"./app", "-x"}, cl.App)
}

func TestUsageErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kernel-trac", "--", "a"}, "did you mean --kernel-trace"},
		{[]string{"-f", "xml", "--", "a"}, "invalid choice"},
		{[]string{"-p"}, "expected one argument"},
		{[]string{"--output-directory"}, "expected one argument"},
		{[]string{"-Mz"}, "cannot be combined"},
		{[]string{"--virtual-gpu=gfx1201", "--", "a"}, "choose from gfx90a, gfx908, gfx906, gfx900, gfx1030, gfx942, gfx1100"},
	} {
		_, err := ParseArgs(tc.args)
		var ue *UsageError
		require.ErrorAs(t, err, &ue, tc.args)
		require.Contains(t, err.Error(), tc.want)
	}
}

func TestNotSupportedYetIsAnError(t *testing.T) {
	cl, err := ParseArgs([]string{"--rocdecode-trace", "--", "a"})
	require.NoError(t, err)
	_, err = Resolve(cl, Sources{LookupEnv: noEnv})
	require.ErrorContains(t, err, "not supported yet")
	// Switching it off explicitly is fine.
	resolve(t, "--sys-trace", "--rocdecode-trace=no", "--", "a")
}

func TestTextInputThreePasses(t *testing.T) {
	p := resolve(t, "-i", testdata("three_pmc.txt"), "--kernel-trace", "--", "app")
	require.Len(t, p.Passes, 3)
	for i, c := range p.Passes {
		require.Equal(t, i+1, c.Pass.Index)
		require.Equal(t, "pmc_"+string(rune('1'+i)), c.Pass.SubDir)
		require.True(t, c.KernelTrace.On())
	}
	require.Equal(t, []string{"GRBM_COUNT", "GRBM_GUI_ACTIVE"}, p.Passes[1].Pmc)
}

func TestYAMLAndJSONJobs(t *testing.T) {
	p := resolve(t, "-i", testdata("jobs.yaml"), "--", "app")
	require.Len(t, p.Passes, 2)
	require.Equal(t, "pass_1", p.Passes[0].Pass.SubDir)
	require.Equal(t, ".*_kernel", p.Passes[0].KernelIncludeRegex)
	require.True(t, p.Passes[0].TruncateKernels.On())
	require.Equal(t, []string{"[1-2]"}, p.Passes[1].KernelIterationRange)

	p = resolve(t, "-i", testdata("jobs.json"), "--", "app")
	require.Len(t, p.Passes, 1)
	c := p.Passes[0]
	require.Equal(t, Pass{}, c.Pass, "a single job without pmc has no pass directory")
	require.Equal(t, [][]string{{"SQ_WAVES"}, {"GRBM_COUNT"}}, c.PmcGroups)
	require.Equal(t, 2, c.PmcGroupInterval)
	require.Equal(t, []string{"csv", "json"}, c.OutputFormat)
	require.Equal(t, "2", c.ToolEnv("/o")["ROCPROF_COUNTER_GROUPS_INTERVAL"])
}

func TestJobConflictsWithCommandLine(t *testing.T) {
	cl, err := ParseArgs([]string{"-i", testdata("jobs.yaml"), "--truncate-kernels=no", "--", "app"})
	require.NoError(t, err)
	_, err = Resolve(cl, Sources{LookupEnv: noEnv})
	require.ErrorContains(t, err, "conflicting value for --truncate-kernels")
	// The same value on both sides is fine.
	resolve(t, "-i", testdata("jobs.yaml"), "-T", "--", "app")
}

// rocprofiler-compute writes rocprof v1's keys after the pmc: line of each
// pass file; rocprofv3 reads only the pmc: lines, and so does rocprof-go.
func TestTextInputIgnoresRocprofV1Keys(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "pmc_perf_0.txt")
	require.NoError(t, os.WriteFile(f, []byte("pmc: SQ_WAVES TCC_HIT[0] TCC_HIT[1]\n\ngpu:\nrange:\nkernel:\n"), 0o600))
	cl, err := ParseArgs([]string{"-i", f, "--", "app"})
	require.NoError(t, err)
	p, err := Resolve(cl, Sources{LookupEnv: noEnv})
	require.NoError(t, err)
	require.Len(t, p.Passes, 1)
	require.Equal(t, []string{"SQ_WAVES", "TCC_HIT[0]", "TCC_HIT[1]"}, p.Passes[0].Pmc)
	require.Empty(t, p.Warnings, "rocprof v1's keys are expected, not warned about")
	require.Len(t, p.Notes, 3)
	require.Contains(t, p.Notes[0], `line 3: "gpu:" ignored`)
	require.Contains(t, p.Notes[2], `line 5: "kernel:" ignored`)
}

func TestMalformedInputFiles(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"malformed.yaml", "not valid YAML"},
		{"malformed.json", "not valid JSON: line 1"},
		{"missing.txt", "no such file"},
	} {
		cl, err := ParseArgs([]string{"-i", testdata(tc.file), "--", "app"})
		require.NoError(t, err)
		_, err = Resolve(cl, Sources{LookupEnv: noEnv})
		require.ErrorContains(t, err, tc.want)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "in.ini")
	require.NoError(t, os.WriteFile(bad, []byte("x"), 0o600))
	_, err := ReadInput(bad)
	require.ErrorContains(t, err, "unsupported extension")
	typo := filepath.Join(dir, "typo.txt")
	require.NoError(t, os.WriteFile(typo, []byte("pmc: SQ_WAVES\npmx: GRBM_COUNT\n"), 0o600))
	in, err := ReadInput(typo)
	require.NoError(t, err, "rocprofv3 ignores lines without pmc:")
	require.Len(t, in.Jobs, 1)
	require.Len(t, in.Warnings, 1)
	require.Contains(t, in.Warnings[0], `line 2: "pmx: GRBM_COUNT" ignored: not a pmc: line`)
	unknown := filepath.Join(dir, "in.yaml")
	require.NoError(t, os.WriteFile(unknown, []byte("jobs:\n - kernel_trase: true\n"), 0o600))
	cl, _ := ParseArgs([]string{"-i", unknown, "--", "a"})
	_, err = Resolve(cl, Sources{LookupEnv: noEnv})
	require.ErrorContains(t, err, `unknown key "kernel_trase"`)
}

func TestPrecedenceFlagsEnvConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "config.yaml")
	require.NoError(t, os.WriteFile(cfgFile, []byte("output_format: [csv]\nkernel_trace: true\noutput_directory: /from/file\nstats: true\n"), 0o600))
	env := map[string]string{"ROCPROF_OUTPUT_PATH": "/from/env", "ROCPROF_OUTPUT_FORMAT": "json,csv"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	cl, err := ParseArgs([]string{"--config", cfgFile, "--stats=no", "--", "app"})
	require.NoError(t, err)
	p, err := Resolve(cl, Sources{LookupEnv: lookup})
	require.NoError(t, err)
	c := p.Passes[0]
	require.Equal(t, "/from/env", c.OutputDirectory, "environment beats the config file")
	require.Equal(t, []string{"json", "csv"}, c.OutputFormat)
	require.True(t, c.KernelTrace.On(), "config file fills what nothing else set")
	require.False(t, c.Stats.On(), "flags beat the config file")
	require.Equal(t, cfgFile, p.ConfigFile)

	// An explicitly named config file that is missing is an error.
	cl, _ = ParseArgs([]string{"--config", filepath.Join(dir, "nope.yaml"), "--", "app"})
	_, err = Resolve(cl, Sources{LookupEnv: noEnv})
	require.Error(t, err)
}

func TestIterationRanges(t *testing.T) {
	r, err := ParseIterationRanges([]string{"[1, 3, 5, [8-12]]"})
	require.NoError(t, err)
	require.Equal(t, []IterationRange{{1, 1}, {3, 3}, {5, 5}, {8, 12}}, r)
	_, err = ParseIterationRanges([]string{"[3-1]"})
	require.Error(t, err)
	_, err = ParseIterationRanges([]string{"x"})
	require.Error(t, err)
}

func TestSummaryWithoutTracingIsFatal(t *testing.T) {
	cl, _ := ParseArgs([]string{"--stats", "--", "app"})
	_, err := Resolve(cl, Sources{LookupEnv: noEnv})
	var ue *UsageError
	require.True(t, errors.As(err, &ue))
	require.Contains(t, err.Error(), "--stats")
	p := resolve(t, "--", "app")
	require.Contains(t, p.Warnings, "no tracing options were enabled")
}

func TestEverySpecIsWellFormed(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range Specs {
		require.NotEmpty(t, s.Long)
		require.NotNil(t, s.field, s.Long)
		require.False(t, seen[s.Long], "duplicate %s", s.Long)
		seen[s.Long] = true
		require.Contains(t, Groups, s.Group, s.Long)
		if s.Default != "" {
			require.NoError(t, s.setValue(&Config{}, s.Default), s.Long)
		}
	}
}

// An input file far larger than any real one (a million pmc: lines) is
// refused at once with the reason, not expanded into a million passes.
func TestInputFileBounds(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.txt")
	line := []byte("pmc: SQ_WAVES GRBM_COUNT\n")
	require.NoError(t, os.WriteFile(big, bytes.Repeat(line, (4<<20)/len(line)+1), 0o644))
	_, err := ReadInput(big)
	require.EqualError(t, err, "input file "+big+" is larger than 4 MiB: an input file lists the passes to run (pmc: lines or jobs), not data; check the path")

	many := filepath.Join(dir, "many.txt")
	require.NoError(t, os.WriteFile(many, bytes.Repeat([]byte("pmc: SQ_WAVES\n"), 1001), 0o644))
	_, err = ReadInput(many)
	require.EqualError(t, err, "input file "+many+" has 1001 passes; rocprof-go runs the app once per pass and takes at most 1000: split the file")

	ok := filepath.Join(dir, "ok.txt")
	require.NoError(t, os.WriteFile(ok, bytes.Repeat([]byte("pmc: SQ_WAVES\n"), 1000), 0o644))
	in, err := ReadInput(ok)
	require.NoError(t, err)
	require.Len(t, in.Jobs, 1000)
}
