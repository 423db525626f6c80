package inject

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/stretchr/testify/require"
)

// TestInjectInEveryROCmRoot: a process of each ROCm root of the matrix (a
// chroot in a private mount namespace, with that root's own glibc: 2.41,
// 2.43) is injected into: its libc found though maps spells its path from
// the host's root, the library checked in the root's view (/tmp is bound
// in), the function called.
func TestInjectInEveryROCmRoot(t *testing.T) {
	rts, err := rocmmatrix.Ready(testsys.RepoRoot(t), testsys.BuildDir(t))
	require.NoError(t, err)
	// /tmp itself: the roots bind it, whatever TMPDIR says.
	dir, err := os.MkdirTemp("/tmp", "rpg-inject-test-")
	require.NoError(t, err)
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	lib := cc(t, dir, "inj.so", "inj.c", "-shared", "-fPIC")
	roots := 0
	for _, r := range rts {
		if r.Root == "" {
			continue
		}
		roots++
		t.Run(r.Name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			p := start(t, r.Command(ctx, "/bin/sh", "-c", "echo ready; exec sleep 600"))
			var pid int
			require.Eventually(t, func() bool {
				ds, _ := Descendants(p.pid)
				for _, d := range append([]int{p.pid}, ds...) {
					// comm changes at the execve, before the loader maps
					// libc: wait for the libc too (CI saw "no glibc" here).
					st, err := readStat(procPath(d, "stat"))
					if err != nil || st.comm != "sleep" {
						continue
					}
					if maps, err := os.ReadFile(procPath(d, "maps")); err == nil && strings.Contains(string(maps), "/libc.so.6") {
						pid = d
						return true
					}
				}
				return false
			}, 20*time.Second, 10*time.Millisecond, "no sleep in the root")
			t.Cleanup(func() { _ = exec.Command("kill", "-9", itoa(pid)).Run() })
			root, err := os.Readlink(procPath(pid, "root"))
			require.NoError(t, err)
			require.NotEqual(t, "/", root, "the process runs in the root")
			mark := filepath.Join(dir, "mark-"+r.Name)
			rep := &Report{}
			ret, err := inject(ctx, pid, lib, "rpg_test_mark", mark, rep)
			require.NoError(t, err)
			require.Equal(t, 42, ret)
			require.Equal(t, "dlopen in libc.so.6", rep.Loader)
			marker(t, mark, pid)
		})
	}
	require.NotZero(t, roots, "no ROCm root is built: run `make test` (it builds the matrix)")
}
