package pipeline

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/options"
)

// An attach's counter set of two passes becomes two attach windows (pmc_1,
// pmc_2), said on stderr: of the duration each, or until Enter without one.
func TestAttachCounterPassesAreWindows(t *testing.T) {
	plan := func(args ...string) *options.Plan {
		cl, err := options.ParseArgs(args)
		require.NoError(t, err)
		p, err := options.Resolve(cl, options.Sources{LookupEnv: func(string) (string, bool) { return "", false }})
		require.NoError(t, err)
		return p
	}
	set := []string{"--pmc", "SQ_WAVES", "GRBM_COUNT", "GRBM_GUI_ACTIVE", "GRBM_CP_BUSY"}
	p := plan(append([]string{"-p", "42", "--virtual-gpu", "gfx90a", "--attach-duration-msec", "2500"}, set...)...)
	var stderr bytes.Buffer
	require.NoError(t, splitAttachCounters(p, nil, &stderr))
	require.Len(t, p.Passes, 2)
	require.Equal(t, []string{"SQ_WAVES", "GRBM_COUNT", "GRBM_GUI_ACTIVE"}, p.Passes[0].Pmc)
	require.Equal(t, []string{"GRBM_CP_BUSY"}, p.Passes[1].Pmc)
	require.Equal(t, options.Pass{Index: 2, SubDir: "pmc_2"}, p.Passes[1].Pass)
	require.Equal(t, "rocprof-go: counters: 2 passes, one per attach window of 2500 ms each, consecutive: pass k's counters come from the dispatches of window k\n", stderr.String())

	p = plan(append([]string{"-p", "42", "--virtual-gpu", "gfx90a"}, set...)...)
	stderr.Reset()
	require.NoError(t, splitAttachCounters(p, nil, &stderr))
	require.Contains(t, stderr.String(), "rocprof-go: counters: 2 passes, one per attach window, each until Enter is pressed (SIGINT or SIGTERM end the run), consecutive")

	// One pass: nothing to say, the plan as it was.
	p = plan("-p", "42", "--virtual-gpu", "gfx90a", "--pmc", "SQ_WAVES", "GRBM_COUNT")
	stderr.Reset()
	require.NoError(t, splitAttachCounters(p, nil, &stderr))
	require.Len(t, p.Passes, 1)
	require.Empty(t, stderr.String())
	require.Equal(t, options.Pass{}, p.Passes[0].Pass)
}
