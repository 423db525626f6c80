package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/pcsprobe"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// The PC-sampling listing is the runtime's answer (the probe's GPUs,
// matched by KFD node id, else by order), whatever rocprof-go's table says;
// a GPU the runtime could not list, or a probe that failed, gets the table
// with a note.
func TestPCSamplingAvailFromTheRuntime(t *testing.T) {
	agents := []topology.Agent{{Index: 0, NodeID: 2, Arch: "gfx90a"}, {Index: 1, NodeID: 3, Arch: "gfx942"}}
	custom := pcsprobe.Config{Method: "host_trap", Unit: "time", Min: 7, Max: 700}
	hostTrap := "   Method              :\thost_trap\n   Unit                :\ttime\n   Min_Interval        :\t"
	var out, notes bytes.Buffer
	gpus := []pcsprobe.GPU{{Node: 3, Name: "gfx942", Configs: []pcsprobe.Config{custom}},
		{Node: 2, Name: "gfx90a", Configs: []pcsprobe.Config{{Method: "stochastic", Unit: "cycles", Min: 256, Max: 1024, Pow2: true}}}}
	require.NoError(t, writePCSamplingAvail(&out, &notes, agents, gpus, nil))
	require.Equal(t, "GPU     :\t0\nName    :\tgfx90a\nconfigs :\n"+
		"   Method              :\tstochastic\n   Unit                :\tcycle\n   Min_Interval        :\t256\n"+
		"   Max_Interval        :\t1024\n   Flags               :\tinterval pow2\n\n\n\n\n"+
		"GPU     :\t1\nName    :\tgfx942\nconfigs :\n"+hostTrap+"7\n   Max_Interval        :\t700\n   Flags               :\tnone\n\n\n\n\n",
		out.String(), "by node id")
	require.Empty(t, notes.String())

	// No node ids: the enumeration order. A GPU whose listing failed: the table.
	out.Reset()
	gpus = []pcsprobe.GPU{{Name: "gfx90a", Configs: []pcsprobe.Config{custom}}, {Name: "gfx942", Err: "hsa_ven_amd_pcs_iterate_configuration: status 0x1000"}}
	require.NoError(t, writePCSamplingAvail(&out, &notes, agents, gpus, nil))
	require.Contains(t, out.String(), "Name    :\tgfx90a\nconfigs :\n"+hostTrap+"7\n")
	require.Contains(t, out.String(), "Name    :\tgfx942\nconfigs :\n"+hostTrap+"1\n", "gfx942 from the table")
	require.Equal(t, "rocprof-go: note: GPU 1's PC-sampling configurations are rocprof-go's table for gfx942 (hsa_ven_amd_pcs_iterate_configuration: status 0x1000)\n", notes.String())

	// The probe failed: the table, with a note.
	out.Reset()
	notes.Reset()
	require.NoError(t, writePCSamplingAvail(&out, &notes, agents, nil, errors.New("hsa_init: status 0x1008")))
	require.Contains(t, out.String(), "Name    :\tgfx90a\nconfigs :\n"+hostTrap+"1\n")
	require.Contains(t, notes.String(), "rocprof-go's table of what the driver offers per architecture: the runtime could not be asked (hsa_init: status 0x1008)")
}

// On ROCm 6.4 and 7.2 `avail` asks the runtime (a probe process with the
// virtual GPU preloaded) and lists exactly what hsa_pcs, an app of that
// runtime, reads from hsa_ven_amd_pcs_iterate_configuration, with no note;
// when the runtime cannot start (the virtual GPU's topology broken on
// purpose) the listing falls back to the table with the note.
func TestPCSamplingAvailAsksTheRuntime(t *testing.T) {
	cli := shippedBinary(t)
	cfgLine := regexp.MustCompile(`(?m)^config method=(\S+) unit=(\S+) min=(\d+) max=(\d+) flags=(\d+)$`)
	onRuntimes(t, []string{"6.4", "7.2"}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		for _, arch := range []string{"gfx90a", "gfx942"} {
			avail := func(env ...string) (string, string) {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
				defer cancel()
				cmd := rt.Command(ctx, cli, "avail", "--virtual-gpu", arch)
				cmd.Env = append(append(os.Environ(), "XDG_CACHE_HOME="+cache), env...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				require.NoError(t, err, stderr.String())
				return string(out), stderr.String()
			}
			list, notes := avail()
			require.NotContains(t, notes, "note:", arch)
			want := "GPU     :\t0\nName    :\t" + arch + "\nconfigs :\n"
			hsaOut := hsaPCSOutput(t, rt, cli, cache, arch)
			ms := cfgLine.FindAllStringSubmatch(hsaOut, -1)
			require.NotEmpty(t, ms, hsaOut)
			for _, m := range ms {
				unit := map[string]string{"time": "time", "cycles": "cycle", "instructions": "instructions"}[m[2]]
				flags := map[string]string{"0": "none", "1": "interval pow2"}[m[5]]
				want += "   Method              :\t" + m[1] + "\n   Unit                :\t" + unit +
					"\n   Min_Interval        :\t" + m[3] + "\n   Max_Interval        :\t" + m[4] +
					"\n   Flags               :\t" + flags + "\n\n\n"
			}
			require.Contains(t, list, want+"\n\n", "%s: the runtime's configurations (hsa_pcs)", arch)
			list, notes = avail(topology.VirtualFaultEnv + "=1")
			require.Contains(t, notes, "rocprof-go: note: the PC-sampling configurations below are rocprof-go's table", arch)
			require.Contains(t, list, "Name    :\t"+arch+"\nconfigs :\n")
		}
	})
}

// hsaPCSOutput is what hsa_pcs (testdata/apps) prints on the runtime's
// virtual GPU of arch, run under rocprof-go (which preloads the virtual
// GPU; with no domain the shim records nothing).
func hsaPCSOutput(t *testing.T, rt rocmmatrix.Runtime, cli, cache, arch string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := rt.Command(ctx, cli, "--virtual-gpu="+arch, "-d", t.TempDir(), "--", filepath.Join(rt.Apps, "hsa_pcs"))
	cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, stderr.String())
	return string(out)
}
