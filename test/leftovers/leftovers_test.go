package leftovers

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func script(t *testing.T, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(filepath.Join("..", "..", "scripts", "check-leftovers.sh"), args...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err, "%s", out)
	}
	return string(out), code
}

// TestCheckLeftoversFailsOnAPlantedRunDirectory: a rocprof-go run directory
// that appears in /dev/shm after the listing fails the check, which names
// it, its owner and the test directory its spool names; removed, it is no
// longer named. Other processes' entries may come and go meanwhile (the
// suite runs in parallel), so only the planted one is asserted.
func TestCheckLeftoversFailsOnAPlantedRunDirectory(t *testing.T) {
	before := filepath.Join(t.TempDir(), "before")
	list, code := script(t, "list")
	require.Equal(t, 0, code, list)
	require.NoError(t, os.WriteFile(before, []byte(list), 0o644))
	require.NotContains(t, list, "/dev/shm/hsakmt_shared_mem", "ROCm's thunk's own segment is no leftover")

	run := fmt.Sprintf("/dev/shm/rocprof-go-run-leftovers-test-%d", rand.Uint64())
	require.NoError(t, os.MkdirAll(filepath.Join(run, "pass_1"), 0o700))
	t.Cleanup(func() { os.RemoveAll(run) })
	require.NoError(t, os.WriteFile(filepath.Join(run, "owner"), []byte("4242 1\n"), 0o600))
	// A spool's process header holds the app's working directory.
	testDir := "/" + "tmp/TestSomethingLeaky" + "1234567" + "/001"
	require.NoError(t, os.WriteFile(filepath.Join(run, "pass_1", "rpg-1-2-0.spool"), []byte("RPGS\x00cwd\x00"+testDir+"\x00"), 0o600))

	out, code := script(t, "check", before)
	require.Equal(t, 1, code, out)
	require.Contains(t, out, "check-leftovers: FAIL: the suite left these behind")
	require.Contains(t, out, "\n  "+run+"\n")
	require.Contains(t, out, "owner (rocprof-go's pid): 4242 1")
	require.Contains(t, out, "its spools name the test directories: "+strings.TrimSuffix(testDir, "/001"))

	require.NoError(t, os.RemoveAll(run))
	out, _ = script(t, "check", before)
	require.NotContains(t, out, run)
}
