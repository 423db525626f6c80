package main

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/jobdir"
	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// A 2-rank job writing into a shared (sticky, world-writable) output
// directory where another user made the job directory's names first keeps
// both ranks' manifests: each user's job directory has its own name
// (.rocprof-go-job-<uid>), and when another user holds that one too (a
// directory of theirs, or a link) the ranks write beside it, say so, and
// job reads them there. Before (803a5e5) every user shared
// .rocprof-go-job: another user's directory there holding a file at the
// job's name failed both ranks' manifests (exit 1, no job), and a link
// there had the manifests written where it pointed and job refuse them.
func TestJobBesideAnotherUsersJobDirectory(t *testing.T) {
	uid, gid := testsys.SecondUser(t)
	const job = "PMIX_NAMESPACE=per-user-job-test"
	own := ".rocprof-go-job-" + strconv.Itoa(os.Geteuid()) // jobdir.OwnName()
	onRuntimes(t, []string{rocmmatrix.HostName}, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		for _, plant := range []string{"directory", "link"} {
			out := filepath.Join(t.TempDir(), "shared")
			require.NoError(t, os.Mkdir(out, 0o777))
			require.NoError(t, os.Chmod(out, os.ModeSticky|0o777))
			theirs := filepath.Join(t.TempDir(), "theirs") // where their links point
			require.NoError(t, os.Mkdir(theirs, 0o777))
			require.NoError(t, os.Chown(theirs, uid, gid))
			for _, name := range []string{jobdir.Name, own} {
				p := filepath.Join(out, name)
				if plant == "link" {
					require.NoError(t, os.Symlink(theirs, p))
					require.NoError(t, os.Lchown(p, uid, gid))
					continue
				}
				require.NoError(t, os.Mkdir(p, 0o755))
				// Their file at the job's name: nothing of this job can go there.
				f := filepath.Join(p, jobdir.Key(job))
				require.NoError(t, os.WriteFile(f, nil, 0o644))
				require.NoError(t, os.Chown(f, uid, gid))
				require.NoError(t, os.Chown(p, uid, gid))
			}
			for r := range 2 {
				stderr, code := shippedOnRuntime(t, rt, cliBinary, cache, 5*time.Minute,
					[]string{"OMPI_COMM_WORLD_RANK=" + strconv.Itoa(r), "OMPI_COMM_WORLD_SIZE=2", "PMIX_NAMESPACE=per-user-job-test"},
					"--virtual-gpu", "--kernel-trace", "-f", "csv", "-d", out, "-o", "rank"+strconv.Itoa(r),
					"--", filepath.Join(rt.Apps, "multistream"), "2", "3")
				require.Equal(t, 0, code, "%s: rank %d: %s", plant, r, stderr)
				require.Contains(t, stderr, "this rank's job manifest goes to "+filepath.Join(out, own)+"-", plant)
			}
			entries, err := os.ReadDir(theirs)
			require.NoError(t, err)
			require.Empty(t, entries, "%s: nothing is written through their links", plant)

			r := runCLI(t, nil, "job", out)
			require.Equal(t, 0, r.code, "%s: %s%s", plant, r.stdout, r.stderr)
			require.Contains(t, r.stdout, `job "`+job+`" (Open MPI): 2 ranks of 2 on 1 hosts, 0 failed`+"\n", plant)
			require.Contains(t, r.stderr, filepath.Join(out, own), "%s: the taken name is said", plant)
			r = runCLI(t, nil, "job", "--json", out)
			require.Equal(t, 0, r.code, "%s: %s", plant, r.stderr)
		}
	})
}
