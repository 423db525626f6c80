package hosts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// fuseHome mounts a FUSE file system (bindfs) over a new directory, as a
// cluster's home on NFS or Lustre is a file system shared between nodes,
// and returns it with the pid of the daemon that serves it (whose read
// count is what ranks read through it).
func fuseHome(t *testing.T) (string, int) {
	for _, tool := range []string{"bindfs", "umount"} {
		_, err := exec.LookPath(tool)
		require.NoError(t, err, "%s is missing: make deps installs it (apt-get install bindfs)", tool)
	}
	base := t.TempDir()
	real, home := filepath.Join(base, "real"), filepath.Join(base, "home")
	require.NoError(t, os.Mkdir(real, 0o700))
	require.NoError(t, os.Mkdir(home, 0o700))
	out, err := exec.Command("bindfs", real, home).CombinedOutput()
	require.NoError(t, err, "bindfs (needs /dev/fuse): %s", out)
	t.Cleanup(func() {
		for range 50 {
			if exec.Command("umount", home).Run() == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("could not unmount %s", home)
	})
	// The daemon: the bindfs process whose arguments name this mount.
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		if args := strings.Split(string(b), "\x00"); len(args) > 2 && filepath.Base(args[0]) == "bindfs" && strings.Contains(string(b), home) {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return home, pid
		}
	}
	t.Fatalf("no bindfs process serves %s", home)
	return "", 0
}

// readBytes is what a process has read (rchar of /proc/PID/io).
func readBytes(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, err := strconv.ParseInt(v, 10, 64)
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no rchar")
	return 0
}

// A job's ranks whose home directory is on a file system shared between
// nodes (here FUSE, standing for NFS, Lustre or GPFS) no longer read the
// injected libraries from it: the library cache moves to the node
// (TMPDIR/rocprof-go-<uid>), so the ranks of a node share one copy and the
// home serves none of the library bytes. Before, each rank's rocprof-go
// checked ~/.cache/rocprof-go byte for byte and every process of the app
// mapped the libraries from there: 4 ranks read 4 x the libraries' size
// through the home's file system (docs/mpi.md gives the figures).
func TestLibrariesAreNodeLocalWhenHomeIsShared(t *testing.T) {
	cli := testsys.Artifact(t, "rocprof-go")
	app := testsys.Artifact(t, "testdata/tiny_kernels")
	home, daemon := fuseHome(t)
	tmp := t.TempDir()
	out := t.TempDir()
	env := append(baseEnv("HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR", "TMPDIR"), "HOME="+home, "TMPDIR="+tmp)

	before := readBytes(t, daemon)
	args := []string{"--allow-run-as-root", "--oversubscribe", "-np", "4", "-x", "HOME", "-x", "TMPDIR",
		cli, "--virtual-gpu", "--kernel-trace", "-d", out, "-o", "%rank%_results", "--", app, "10"}
	cmd := exec.Command("mpirun", args...)
	cmd.Env = env
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	read := readBytes(t, daemon) - before

	libs, err := filepath.Glob(filepath.Join(tmp, fmt.Sprintf("rocprof-go-%d", os.Getuid()), "*", "librocprof-go-preload.so"))
	require.NoError(t, err)
	require.Len(t, libs, 1, "one node-local copy for the node's ranks")
	require.NoDirExists(t, filepath.Join(home, ".cache", "rocprof-go"), "nothing unpacked into the shared home")
	dbs, _ := filepath.Glob(filepath.Join(out, "*_results_results.db"))
	require.Len(t, dbs, 4)
	st, err := os.Stat(libs[0])
	require.NoError(t, err)
	require.Less(t, read, st.Size(), "the ranks read %d bytes through the shared home (the preload library alone is %d)", read, st.Size())
	t.Logf("4 ranks, HOME on FUSE: %d bytes read through the home (the preload library is %d bytes); libraries in %s", read, st.Size(), filepath.Dir(libs[0]))
}
