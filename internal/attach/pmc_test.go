package attach

import (
	"bufio"
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/topology"
)

// The counter program the agent runs: per GPU, the packets with their
// relocations (checked by PMCProgram against a build at other addresses)
// and each counter's records as sums of output-buffer samples; a ratio is
// refused with the way to collect it; a set of two passes is split.
func TestPMCProgram(t *testing.T) {
	for _, arch := range []string{"gfx906", "gfx90a", "gfx942", "gfx1100"} {
		agents := []topology.Agent{{Index: 0, NodeID: 1, Arch: arch, Virtual: true}}
		prog, warnings, err := PMCProgram(PMCSet{Names: []string{"SQ_WAVES", "GRBM_COUNT", "NO_SUCH_COUNTER"}}, agents)
		require.NoError(t, err, arch)
		require.Len(t, warnings, 1, arch)
		require.Contains(t, warnings[0], "NO_SUCH_COUNTER", arch)
		seen := map[string]int{}
		recs := map[string]int{}
		sc := bufio.NewScanner(bytes.NewReader(prog))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			seen[f[0]]++
			if f[0] == "rec" {
				recs[f[2]]++
				nd, err := strconv.Atoi(f[4])
				require.NoError(t, err)
				require.NotEqual(t, "0", f[5+2*nd], "%s: %s has no sample: %s", arch, f[2], sc.Text())
			}
		}
		require.Equal(t, "rpg-attach-pmc 1\n", string(prog[:17]))
		require.Equal(t, 1, seen["agent"], arch)
		require.Equal(t, 1, seen["end"], arch)
		for _, s := range []string{"cmd", "start", "stop", "read"} {
			require.Equal(t, 1, seen[s], "%s: %s", arch, s)
		}
		// Every IB packet names the command buffer: two relocations each.
		require.GreaterOrEqual(t, seen["reloc"], 6+2, arch)
		require.GreaterOrEqual(t, recs["GRBM_COUNT"], 1, arch) // one per XCC on gfx942
		require.GreaterOrEqual(t, recs["SQ_WAVES"], 1, arch)
	}
	agents := []topology.Agent{{Index: 0, NodeID: 1, Arch: "gfx90a", Virtual: true}}
	_, _, err := PMCProgram(PMCSet{Names: []string{"GPUBusy"}}, agents)
	require.ErrorContains(t, err, "counter GPUBusy is not a sum of hardware samples")
	require.ErrorContains(t, err, "collect GPUBusy in a launched run")

	many := []string{"GRBM_COUNT", "GRBM_GUI_ACTIVE", "GRBM_CP_BUSY", "GRBM_SPI_BUSY"}
	passes, err := PMCPasses(PMCSet{Names: many}, agents)
	require.NoError(t, err)
	require.Greater(t, len(passes), 1, "%v fit one pass", many)
	var all []string
	for _, p := range passes {
		all = append(all, p...)
	}
	require.ElementsMatch(t, many, all)
	_, _, err = PMCProgram(PMCSet{Names: many}, agents)
	require.ErrorContains(t, err, "passes, one attach window each")
}
