package options

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAttachSpellings(t *testing.T) {
	for _, args := range [][]string{
		{"-p", "4321", "--kernel-trace"},
		{"-p4321", "--kernel-trace"},
		{"--pid", "4321", "--kernel-trace"},
		{"--pid=4321", "--kernel-trace"},
		{"--attach", "4321", "--kernel-trace"},
		{"--attach=4321", "--kernel-trace"},
	} {
		p := resolve(t, args...)
		require.Equal(t, 4321, p.AttachTarget(), args)
		require.True(t, p.Passes[0].Attaching(), args)
		require.Empty(t, p.App, args)
		// Defaults: children on, no duration (Enter, signals, exit).
		require.True(t, p.Passes[0].AttachChildren.On(), args)
		require.Zero(t, p.Passes[0].AttachDurationMsec, args)
	}
	p := resolve(t, "-p", "7", "--hip-trace", "--attach-duration-msec", "2500", "--attach-children=no", "--attach-sync-output")
	c := p.Passes[0]
	require.Equal(t, 2500, c.AttachDurationMsec)
	require.False(t, c.AttachChildren.On())
	require.True(t, c.AttachSyncOutput.On())
	require.Zero(t, resolve(t, "--kernel-trace", "--", "app").AttachTarget())
}

func TestAttachFromTheEnvironment(t *testing.T) {
	p, err := resolveEnv(map[string]string{"ROCPROF_ATTACH_PID": "99", "ROCPROF_ATTACH_DURATION": "1500"}, "--kernel-trace")
	require.NoError(t, err)
	require.Equal(t, 99, p.AttachTarget())
	require.Equal(t, 1500, p.Passes[0].AttachDurationMsec)
	// The command line wins.
	p, err = resolveEnv(map[string]string{"ROCPROF_ATTACH_PID": "99"}, "-p", "5", "--kernel-trace")
	require.NoError(t, err)
	require.Equal(t, 5, p.AttachTarget())
	// An attach pid in the environment and an app command: the one error.
	_, err = resolveEnv(map[string]string{"ROCPROF_ATTACH_PID": "99"}, "--kernel-trace", "--", "app")
	require.ErrorContains(t, err, "cannot be combined with an application command")
}

func TestAttachErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-p"}, "expected one argument"},
		{[]string{"--attach", "--kernel-trace"}, "expected one argument"},
		{[]string{"-p", "abc", "--kernel-trace"}, `"abc" is not a process id`},
		{[]string{"-p", "0", "--kernel-trace"}, `"0" is not a process id`},
		{[]string{"--pid=-3", "--kernel-trace"}, `"-3" is not a process id`},
		{[]string{"-p", "12", "--kernel-trace", "--", "./app"}, "cannot be combined with an application command"},
		{[]string{"-p", "12", "--kernel-trace", "./app"}, "cannot be combined with an application command"},
		{[]string{"-p", "12", "--att"}, "--advanced-thread-trace: cannot be collected while attached"},
		{[]string{"-p", "12", "--kernel-trace", "--attach-duration-msec", "-1"}, "must not be negative"},
		{[]string{"--kernel-trace", "--attach-duration-msec", "100", "--", "app"}, "--attach-duration-msec: applies only when attaching"},
		{[]string{"--kernel-trace", "--attach-children=no", "--", "app"}, "--attach-children: applies only when attaching"},
	} {
		err := resolveErr(tc.args...)
		require.Error(t, err, tc.args)
		var ue *UsageError
		require.ErrorAs(t, err, &ue, tc.args)
		require.Contains(t, err.Error(), tc.want, tc.args)
	}
	// Every refusal names what attaching collects.
	err := resolveErr("-p", "12", "--att")
	require.ErrorContains(t, err, "--kernel-trace, --memory-copy-trace, --memory-allocation-trace, --scratch-memory-trace, --hsa-core-trace, --hsa-amd-trace, --hsa-image-trace, --hsa-finalizer-trace, --pmc, --pc-sampling-method, --hip-runtime-trace, --hip-compiler-trace, --marker-trace, --rccl-trace")
}

// PC sampling is collected while attached (attach_pcs.c): the request
// resolves as for a launch.
func TestAttachTakesPCSampling(t *testing.T) {
	p := resolve(t, "-p", "12", "--kernel-trace", "--pc-sampling-beta-enabled", "--pc-sampling-method", "host_trap", "--pc-sampling-unit", "time", "--pc-sampling-interval", "1")
	require.True(t, p.Passes[0].PCSampling())
	require.Empty(t, p.Warnings)
}

// HSA API calls, allocations and scratch memory are collected while
// attached (attach_table.c): --hsa-trace switches on its four tables.
func TestAttachTakesHSATracing(t *testing.T) {
	p := resolve(t, "-p", "12", "--hsa-trace", "--memory-allocation-trace", "--scratch-memory-trace")
	require.ElementsMatch(t, []string{"hsa_core_trace", "hsa_amd_trace", "hsa_image_trace", "hsa_finalizer_trace",
		"memory_allocation_trace", "scratch_memory_trace"}, p.Passes[0].TracingDomains())
	require.Empty(t, p.Warnings)
	require.ElementsMatch(t, []string{"hsa_core_trace"}, resolve(t, "-p", "12", "--hsa-core-trace").Passes[0].TracingDomains())
}

// The options of an app rocprof-go starts are said to change nothing
// (a config file written for launches may hold them).
func TestAttachSaysLaunchOnlyOptionsChangeNothing(t *testing.T) {
	p := resolve(t, "-p", "12", "--kernel-trace", "--virtual-gpu", "--timeout", "5s")
	require.Contains(t, p.Warnings, "--virtual-gpu changes nothing when attaching: the virtual GPU is loaded when a process starts (start the target with it: docs/attach.md); here it only names the agents run.json lists and counters are planned for")
	require.Contains(t, p.Warnings, "--timeout changes nothing when attaching: it ends an app rocprof-go started; --attach-duration-msec bounds the attach")
}

func TestAttachTakesCounterPassesOfAnInputFile(t *testing.T) {
	// One attach window per pmc: line.
	require.Len(t, resolve(t, "-p", "12", "-i", testdata("three_pmc.txt"), "--kernel-trace").Passes, 3)
	// Several jobs without counters: one pass per attach.
	in := filepath.Join(t.TempDir(), "jobs.yaml")
	require.NoError(t, os.WriteFile(in, []byte("jobs:\n  - kernel_trace: true\n  - hip_trace: true\n"), 0o600))
	err := resolveErr("-p", "12", "-i", in)
	require.ErrorContains(t, err, "an attach is one pass")
}

func TestAttachAggregatesKeepWhatAttachingCollects(t *testing.T) {
	p := resolve(t, "-p", "12", "--sys-trace")
	c := p.Passes[0]
	// Every domain of --sys-trace is collected while attached.
	require.ElementsMatch(t, []string{"kernel_trace", "memory_copy_trace", "memory_allocation_trace", "scratch_memory_trace",
		"hsa_core_trace", "hsa_amd_trace", "hsa_image_trace", "hsa_finalizer_trace",
		"hip_runtime_trace", "hip_compiler_trace", "marker_trace", "rccl_trace"}, c.TracingDomains())
	require.Empty(t, p.Warnings)
	// Nothing asked: said.
	p = resolve(t, "-p", "12")
	require.Contains(t, p.Warnings, "no tracing options were enabled: attaching records nothing; add e.g. --kernel-trace --hip-trace --marker-trace")
}

// Counters while attached (docs/attach.md): --pmc is one attach window,
// each pmc: line of an input file one more; pmc_groups, which multiplex
// over the dispatches of one run, are refused; SplitCounters gives each
// hardware pass of a set a window of its own.
func TestAttachCounters(t *testing.T) {
	plan := resolve(t, "-p", "12", "--pmc", "SQ_WAVES", "GRBM_COUNT")
	require.Len(t, plan.Passes, 1)
	require.Equal(t, []string{"SQ_WAVES", "GRBM_COUNT"}, plan.Passes[0].Pmc)

	dir := t.TempDir()
	lines := filepath.Join(dir, "lines.txt")
	require.NoError(t, os.WriteFile(lines, []byte("pmc: SQ_WAVES\npmc: GRBM_COUNT\n"), 0o600))
	plan = resolve(t, "-p", "12", "-i", lines)
	require.Len(t, plan.Passes, 2)
	require.Equal(t, "pmc_2", plan.Passes[1].Pass.SubDir)

	groups := filepath.Join(dir, "groups.json")
	require.NoError(t, os.WriteFile(groups, []byte(`{"jobs": [{"pmc_groups": [["SQ_WAVES"], ["GRBM_COUNT"]]}]}`), 0o600))
	err := resolveErr("-p", "12", "-i", groups)
	require.ErrorContains(t, err, "pmc_groups (counter groups multiplexed over the dispatches) cannot be collected while attached")

	jobs := filepath.Join(dir, "jobs.json")
	require.NoError(t, os.WriteFile(jobs, []byte(`{"jobs": [{"kernel_trace": true}, {"hip_trace": true}]}`), 0o600))
	require.ErrorContains(t, resolveErr("-p", "12", "-i", jobs), "an attach is one pass over the running process")

	plan = resolve(t, "-p", "12", "--pmc", "A", "B", "C")
	n, err := plan.SplitCounters(func(names []string) ([][]string, error) {
		return [][]string{{"A", "C"}, {"B"}}, nil
	})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, []string{"A", "C"}, plan.Passes[0].Pmc)
	require.Equal(t, []string{"B"}, plan.Passes[1].Pmc)
	require.Equal(t, Pass{Index: 2, SubDir: "pmc_2"}, plan.Passes[1].Pass)
}
