package slurm

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The test clusters' ports come from below the kernel's ephemeral range,
// which outgoing connections (mpirun's, other test packages') draw from:
// in CI one of them took slurmctld's port between the check and the bind.
func TestClusterPortsAreBelowTheEphemeralRange(t *testing.T) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	require.NoError(t, err)
	low, err := strconv.Atoi(strings.Fields(string(b))[0])
	require.NoError(t, err)
	for range 50 {
		a, b := freePorts(t)
		require.NotEqual(t, a, b)
		for _, p := range []int{a, b} {
			require.Less(t, p, low)
			require.GreaterOrEqual(t, p, 1024)
		}
	}
}

// A cluster whose slurmctld port another process took before slurmctld
// bound it starts again on other ports, and runs a job.
func TestClusterStartsAgainWhenItsPortIsTaken(t *testing.T) {
	c := startClusterWith(t, true)
	require.Equal(t, 2, c.attempts, "slurmctld bound a port the test held")
	res := c.sh("srun -n 1 true")
	require.Equal(t, 0, res.exit, "stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
}
