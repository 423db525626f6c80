package testsys

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
)

// Cgroup is a memory cgroup a test made, removed when the test ends.
type Cgroup struct {
	Dir string
	v2  bool
}

// MemoryCgroup makes a memory cgroup limited to limit bytes: a node (or a
// batch job's allocation) with that much memory. cgroup v2 when the memory
// controller is there (under the root, which may enable it for its
// children), else v1's memory hierarchy (under this process's own cgroup).
// Root only, as CI runs.
func MemoryCgroup(t testing.TB, limit int64) *Cgroup {
	t.Helper()
	require.Equal(t, 0, os.Geteuid(), "this test makes a memory cgroup: run it as root (CI does)")
	name := fmt.Sprintf("rpg-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	var cg *Cgroup
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && strings.Contains(string(b), "memory") {
		_ = os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte("+memory"), 0o644)
		cg = &Cgroup{Dir: filepath.Join("/sys/fs/cgroup", name), v2: true}
	} else {
		own := "/"
		b, err := os.ReadFile("/proc/self/cgroup")
		require.NoError(t, err)
		for _, l := range strings.Split(string(b), "\n") {
			if f := strings.SplitN(l, ":", 3); len(f) == 3 && f[1] == "memory" {
				own = f[2]
			}
		}
		cg = &Cgroup{Dir: filepath.Join("/sys/fs/cgroup/memory", own, name)}
	}
	require.NoError(t, os.Mkdir(cg.Dir, 0o755), "no memory cgroup controller here (cgroup v2 with memory, or v1's /sys/fs/cgroup/memory)")
	t.Cleanup(func() {
		for i := 0; i < 50; i++ {
			if os.Remove(cg.Dir) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Errorf("the test's cgroup %s could not be removed", cg.Dir)
	})
	file := "memory.limit_in_bytes"
	if cg.v2 {
		file = "memory.max"
		_ = os.WriteFile(filepath.Join(cg.Dir, "memory.swap.max"), []byte("0"), 0o644)
	} else {
		_ = os.WriteFile(filepath.Join(cg.Dir, "memory.swappiness"), []byte("0"), 0o644)
	}
	require.NoError(t, os.WriteFile(filepath.Join(cg.Dir, file), []byte(strconv.FormatInt(limit, 10)), 0o644))
	return cg
}

// Wrap rewrites cmd (before it starts) to enter the cgroup first, so that
// it and everything it starts are charged to it.
func (cg *Cgroup) Wrap(cmd *exec.Cmd) {
	args := append([]string{"/bin/sh", "-c", `echo $$ > "$0/cgroup.procs" || exit 125; shift; exec "$@"`, cg.Dir, "--", cmd.Path}, cmd.Args[1:]...)
	cmd.Path, cmd.Args = "/bin/sh", args
}

func (cg *Cgroup) read(name string) string {
	b, _ := os.ReadFile(filepath.Join(cg.Dir, name))
	return string(b)
}

// Peak is the most memory the cgroup was charged at once.
func (cg *Cgroup) Peak() int64 {
	name := "memory.max_usage_in_bytes"
	if cg.v2 {
		name = "memory.peak"
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(cg.read(name)), 10, 64)
	return n
}

// OOMKills counts the processes the kernel killed for want of memory in
// the cgroup.
func (cg *Cgroup) OOMKills() int {
	name := "memory.oom_control"
	if cg.v2 {
		name = "memory.events"
	}
	for _, l := range strings.Split(cg.read(name), "\n") {
		if v, ok := strings.CutPrefix(l, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}
