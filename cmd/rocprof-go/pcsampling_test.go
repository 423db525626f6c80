package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// PC sampling on every runtime of the matrix, before any app starts: ROCm
// 5.2 and 6.1 refuse it naming the runtime; on 6.4 and 7.2 a request is
// checked against the virtual GPU's configurations (method/unit offered,
// interval bounds, power of two); host trap runs (its samples:
// TestPCSamplingHostTrapThroughCLI), stochastic runs on 7.2
// (TestPCSamplingStochasticThroughCLI) and is refused on 6.4, whose runtime
// has no stochastic sampling; stochastic on gfx90a is refused naming the
// GPU and what it offers. -L lists the configurations where the runtime
// offers PC sampling.
func TestPCSamplingOnEveryRuntime(t *testing.T) {
	cli := shippedBinary(t)
	onRuntimes(t, nil, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		app := filepath.Join(rt.Apps, "multistream")
		run := func(arch string, pcs ...string) (string, int) {
			args := append([]string{"--virtual-gpu=" + arch, "--kernel-trace", "-d", t.TempDir(), "--pc-sampling-beta-enabled"}, pcs...)
			return shippedOnRuntime(t, rt, cli, cache, 2*time.Minute, nil, append(args, "--", app, "1", "1")...)
		}
		hostTrap := []string{"--pc-sampling-method", "host_trap", "--pc-sampling-unit", "time", "--pc-sampling-interval", "100"}
		old := rt.Name == rocmmatrix.HostName || rt.Name == "6.1"
		stderr, code := run("gfx90a", hostTrap...)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := rt.Command(ctx, cli, "avail", "--virtual-gpu", "gfx942")
		cmd.Env = append(os.Environ(), "XDG_CACHE_HOME="+cache)
		out, err := cmd.Output()
		require.NoError(t, err)
		list := string(out)
		require.Contains(t, list, "Counter_Name")
		if old {
			require.NotEqual(t, 0, code, stderr)
			require.NotContains(t, stderr, "dispatches=", "the app must not start")
			require.NotContains(t, list, "configs :", "no PC sampling without the runtime's")
			require.Regexp(t, `PC sampling: the ROCm runtime the app will load, \S*libhsa-runtime64\.so\S*, has no PC sampling`, stderr)
			require.Contains(t, stderr, "ROCm 6.4 or later (7.x included) offers it on gfx90a")
			return
		}
		require.Equal(t, 0, code, "host trap is collected (TestPCSamplingHostTrapThroughCLI)\n"+stderr)
		stderr, code = run("gfx942", "--pc-sampling-method", "stochastic", "--pc-sampling-unit", "cycles", "--pc-sampling-interval", "1048576")
		if rt.Name == "6.4" {
			require.NotEqual(t, 0, code)
			require.Contains(t, stderr, "has no stochastic sampling (ROCm 6.4's runtime samples with host trap only)", stderr)
		} else {
			// the app (built for gfx90a) finds no kernel for gfx942, but
			// the session was created: stochastic is collected on 7.x
			// (TestPCSamplingStochasticThroughCLI)
			require.NotContains(t, stderr, "PC sampling:", stderr)
			require.Contains(t, stderr, "Created PC sampling session", stderr)
		}
		stderr, code = run("gfx942", "--pc-sampling-method", "stochastic", "--pc-sampling-unit", "cycles", "--pc-sampling-interval", "1000")
		require.NotEqual(t, 0, code)
		require.Contains(t, stderr, "--pc-sampling-interval 1000 must be a power of two for stochastic sampling on GPU 0 (e.g. 512)")
		stderr, code = run("gfx90a", "--pc-sampling-method", "stochastic", "--pc-sampling-unit", "cycles", "--pc-sampling-interval", "1024")
		require.NotEqual(t, 0, code)
		require.Contains(t, stderr, "PC sampling: GPU 0 (gfx90a) offers no stochastic sampling in cycles; it offers host_trap/time")
		stderr, code = run("gfx1100", hostTrap...)
		require.NotEqual(t, 0, code)
		require.Contains(t, stderr, "PC sampling: GPU 0 (gfx1100) has no PC sampling")
		require.Contains(t, list, "GPU     :\t0\nName    :\tgfx942\nconfigs :\n"+
			"   Method              :\thost_trap\n   Unit                :\ttime\n   Min_Interval        :\t1\n"+
			"   Max_Interval        :\t18446744073709551615\n   Flags               :\tnone\n\n\n"+
			"   Method              :\tstochastic\n   Unit                :\tcycle\n   Min_Interval        :\t256\n"+
			"   Max_Interval        :\t2147483648\n   Flags               :\tinterval pow2\n\n\n\n\n")
	})
}
