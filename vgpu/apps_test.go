package vgpu

import (
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

type appCase struct {
	name   string
	bin    string   // under the runtime's apps directory (build/testdata on the host)
	args   []string // "@file": a file of the apps directory
	env    []string
	code   int
	stdout string // regular expression the output must match
	tool   bool   // also run under the intercepting HSA_TOOLS_LIB tool
	idle   bool   // submits no packets (the tool then sees none)
	// hostOnly: built for the host's ROCm only (the other architectures'
	// builds; the roots carry gfx90a and gfx942 builds).
	hostOnly bool
	// newer: needs a runtime newer than ROCm 5.2 (gfx942, gfx1100).
	newer bool
}

var appCases = []appCase{
	{name: "devices", bin: "devices", code: 0, stdout: `devices=1\ndevice 0 name=AMD Instinct MI210 arch=gfx90a:sramecc\+:xnack- cus=104`, tool: true},
	{name: "devices-4gpus", bin: "devices", env: []string{"ROCPROF_VGPU_COUNT=4"}, code: 0, stdout: `devices=4\n(device \d name=AMD Instinct MI210 .*\n){4}peer copy ok can_access_peer=1`},
	{name: "features", bin: "features", args: []string{"@module_kernels.co"}, code: 0, stdout: `module launch ok\nmanaged ok value=42\ncooperative launch ok\nevent timing ok ms=`, tool: true},
	{name: "idle", bin: "idle", args: []string{"1"}, code: 0, stdout: `idle_seconds=1 cpu_seconds=[0-9.]+ idle_cpu_percent=`},
	{name: "multistream", bin: "multistream", args: []string{"4", "8"}, code: 0, stdout: `streams=4 iterations=8 dispatches=64 copies=128`, tool: true},
	{name: "memcheck", bin: "memcheck", code: 0, stdout: `all copies and memsets round-trip`, tool: true},
	{name: "multithread", bin: "multithread", args: []string{"4", "200"}, code: 0, stdout: `threads=4 dispatches=800`, tool: true},
	{name: "abort", bin: "abort", code: 134, stdout: `dispatches=1 completed, 100 in flight, aborting`, tool: true},
	{name: "segfault", bin: "segfault", code: 139, stdout: `dispatches=1 completed, 100 in flight, crashing`, tool: true},
	{name: "fork", bin: "fork", code: 0, stdout: `parent dispatches=2 child_exit=7`, tool: true},
	{name: "exec", bin: "exec", code: 0, stdout: `exec child dispatches=1\n(.|\n)*parent dispatches=1 child_exit=5`, tool: true},
	{name: "tiny_kernels", bin: "tiny_kernels", args: []string{"20000"}, code: 0, stdout: `dispatches=20000 event_ms=[0-9]*[1-9][0-9]*\.`, tool: true},
	{name: "callrate", bin: "callrate", args: []string{"0.2"}, code: 0, stdout: `calls=200000 ns_per_call=`, tool: true, idle: true},
	{name: "hsa_queues", bin: "hsa_queues", args: []string{"6"}, code: 0, stdout: `queues=6 packets=10 memory=ok`, tool: true},
	{name: "gfx908-multistream", hostOnly: true, bin: "gfx908/multistream", env: []string{"ROCPROF_VGPU_ARCH=gfx908"}, args: []string{"2", "4"}, code: 0, stdout: `dispatches=16 copies=32`, tool: true},
	{name: "gfx908-memcheck", hostOnly: true, bin: "gfx908/memcheck", env: []string{"ROCPROF_VGPU_ARCH=gfx908"}, code: 0, stdout: `round-trip`},
	{name: "gfx908-devices", hostOnly: true, bin: "gfx908/devices", env: []string{"ROCPROF_VGPU_ARCH=gfx908"}, code: 0, stdout: `name=AMD Instinct MI100 arch=gfx908:sramecc\+:xnack- cus=120`},
	{name: "gfx906-devices", hostOnly: true, bin: "gfx906/devices", env: []string{"ROCPROF_VGPU_ARCH=gfx906"}, code: 0, stdout: `arch=gfx906:sramecc-:xnack- cus=60`},
	{name: "gfx900-devices", hostOnly: true, bin: "gfx900/devices", env: []string{"ROCPROF_VGPU_ARCH=gfx900"}, code: 0, stdout: `arch=gfx900:xnack- cus=64`},
	{name: "gfx1030-devices", hostOnly: true, bin: "gfx1030/devices", env: []string{"ROCPROF_VGPU_ARCH=gfx1030"}, code: 0, stdout: `arch=gfx1030 `},
	{name: "gfx1030-memcheck", hostOnly: true, bin: "gfx1030/memcheck", env: []string{"ROCPROF_VGPU_ARCH=gfx1030"}, code: 0, stdout: `round-trip`},
	{name: "gfx900-hsa_queues", bin: "hsa_queues", env: []string{"ROCPROF_VGPU_ARCH=gfx900"}, code: 0, stdout: `queues=4 packets=8 memory=ok`},
	{name: "gfx942-devices", newer: true, bin: "gfx942/devices", env: []string{"ROCPROF_VGPU_ARCH=gfx942"}, code: 0, stdout: `name=AMD Instinct MI300X arch=gfx942:sramecc\+:xnack- cus=304`, tool: true},
	{name: "gfx942-multistream", newer: true, bin: "gfx942/multistream", env: []string{"ROCPROF_VGPU_ARCH=gfx942"}, args: []string{"2", "4"}, code: 0, stdout: `dispatches=16 copies=32`, tool: true},
	{name: "gfx942-memcheck", newer: true, bin: "gfx942/memcheck", env: []string{"ROCPROF_VGPU_ARCH=gfx942"}, code: 0, stdout: `round-trip`},
	{name: "gfx1100-devices", newer: true, bin: "gfx1100/devices", env: []string{"ROCPROF_VGPU_ARCH=gfx1100"}, code: 0, stdout: `name=AMD Radeon RX 7900 XTX arch=gfx1100 cus=48`, tool: true},
	{name: "gfx1100-multistream", newer: true, bin: "gfx1100/multistream", env: []string{"ROCPROF_VGPU_ARCH=gfx1100"}, args: []string{"2", "4"}, code: 0, stdout: `dispatches=16 copies=32`, tool: true},
	{name: "gfx1100-memcheck", newer: true, bin: "gfx1100/memcheck", env: []string{"ROCPROF_VGPU_ARCH=gfx1100"}, code: 0, stdout: `round-trip`},
	{name: "gfx942-hsa_queues", newer: true, bin: "hsa_queues", env: []string{"ROCPROF_VGPU_ARCH=gfx942"}, code: 0, stdout: `queues=4 packets=8 memory=ok`},
}

var toolLine = regexp.MustCompile(`vgpu-testtool: queues=(\d+) packets=(\d+)`)

// Every sample app, compiled with each runtime's own hipcc, reaches its
// expected exit code on the virtual GPU under every ROCm of the matrix,
// alone and under a minimal intercepting HSA_TOOLS_LIB tool built against
// that runtime's headers.
func TestSampleApps(t *testing.T) {
	for _, rt := range runtimes(t) {
		for _, c := range appCases {
			if (c.hostOnly && rt.Name != rocmmatrix.HostName) || (c.newer && rt.Name == rocmmatrix.HostName) {
				continue
			}
			t.Run(rt.Name+"/"+c.name, func(t *testing.T) { sampleApp(t, rt, c) })
		}
	}
}

func sampleApp(t *testing.T, rt rocmmatrix.Runtime, c appCase) {
	bin := filepath.Join(rt.Apps, c.bin)
	args := append([]string(nil), c.args...)
	for i, a := range args {
		if strings.HasPrefix(a, "@") {
			args[i] = filepath.Join(rt.Apps, a[1:])
		}
	}
	r := runOn(t, rt, 2*time.Minute, c.env, bin, args...)
	require.Equalf(t, c.code, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Regexp(t, c.stdout, r.stdout)
	require.NotContains(t, r.stderr, "rocprof-go virtual GPU:", "the emulation reported an error or a gap")
	if !c.tool {
		return
	}
	env := append([]string{"HSA_TOOLS_LIB=" + rt.Tool, "HSA_TOOLS_REPORT_LOAD_FAILURE=1"}, c.env...)
	r = runOn(t, rt, 2*time.Minute, env, bin, args...)
	require.Equalf(t, c.code, r.code, "under the tool\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Regexp(t, c.stdout, r.stdout)
	if c.code == 0 && !c.idle {
		m := toolLine.FindStringSubmatch(r.stderr)
		require.NotNilf(t, m, "the tool did not report: %s", r.stderr)
		n, _ := strconv.Atoi(m[2])
		require.Positive(t, n, "the tool intercepted no packets")
	}
}

// A bad setting fails hsa_init with a message naming the variable.
func TestBadConfigurationIsReported(t *testing.T) {
	cases := []struct{ env, want string }{
		{"ROCPROF_VGPU_ARCH=gfx999", "ROCPROF_VGPU_ARCH=gfx999 is invalid"},
		{"ROCPROF_VGPU_COUNT=9", "ROCPROF_VGPU_COUNT=9 is invalid: use 1 to 8"},
		{"ROCPROF_VGPU_CLOCK=fast", "ROCPROF_VGPU_CLOCK=fast is invalid"},
		{"ROCPROF_VGPU_KERNEL_SCALE=vadd", "ROCPROF_VGPU_KERNEL_SCALE=vadd is invalid"},
	}
	bin := artefact(t, "testdata/hsa_queues")
	for _, c := range cases {
		t.Run(c.env, func(t *testing.T) {
			r := run(t, time.Minute, []string{c.env}, bin)
			require.NotEqual(t, 0, r.code)
			require.Contains(t, r.stderr, c.want)
		})
	}
}
