package multinode

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

// node is one emulated node: its hostname and how far its boot clock is
// from this machine's (a time namespace's boottime and monotonic offsets).
type node struct {
	host   string
	offset time.Duration
}

// libDir points the CLI at this build's injected libraries.
func libDir(t *testing.T) string {
	dir := t.TempDir()
	for _, p := range []string{"lib/librocprof-go-preload.so", "lib/librocprof-go-shim.so", "vgpu/librocprof-go-vgpu.so"} {
		require.NoError(t, os.Symlink(testsys.Artifact(t, p), filepath.Join(dir, filepath.Base(p))))
	}
	return "ROCPROF_GO_LIBDIR=" + dir
}

var markRE = regexp.MustCompile(`^rt=(\d+) host=(\S+) i=\d+$`)

// Two ranks of a job on two nodes whose boot clocks differ by a day (and
// by 1,000 s more in the other direction for a third): each rank's
// timestamps are its node's CLOCK_BOOTTIME, so a merged timeline put them
// a day apart. `convert -f pftrace` of the merged job lines the nodes up
// with the realtime/boottime pair each spool recorded: every ROCTx mark
// lands within 1 ms of the realtime the app read when it made it (the
// marks carry it, independently of rocprof-go), on every node, and the
// kernels of every node fall inside the job's wall-clock window.
func TestMultiNodeTimelineIsAligned(t *testing.T) {
	cli := testsys.Artifact(t, "rocprof-go")
	marks := testsys.Artifact(t, "testdata/realtime_marks")
	tiny := testsys.Artifact(t, "testdata/tiny_kernels")
	libs := libDir(t)
	out := t.TempDir()
	nodes := []node{{"node-a", 0}, {"node-b", 24 * time.Hour}, {"node-c", -1000 * time.Second}}

	wallStart := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, len(nodes))
	outputs := make([]string, len(nodes))
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			secs := strconv.FormatInt(int64(n.offset/time.Second), 10)
			script := fmt.Sprintf(`hostname %s && exec "$@"`, n.host)
			args := []string{"--fork", "--uts", "--time", "--boottime", secs, "--monotonic", secs, "sh", "-c", script, "sh",
				cli, "--virtual-gpu", "--marker-trace", "--kernel-trace", "-f", "rocpd", "-d", out, "-o", "rank" + strconv.Itoa(i),
				"--", "sh", "-c", `"$0" 5 && "$1" 20 >/dev/null`, marks, tiny}
			cmd := exec.Command("unshare", args...)
			cmd.Env = append(os.Environ(), libs, "OMPI_COMM_WORLD_RANK="+strconv.Itoa(i), "OMPI_COMM_WORLD_SIZE=3",
				"PMIX_NAMESPACE=multinode-test")
			b, err := cmd.CombinedOutput()
			outputs[i], errs[i] = string(b), err
		}()
	}
	wg.Wait()
	wallEnd := time.Now()
	for i := range nodes {
		require.NoError(t, errs[i], "%s: %s", nodes[i].host, outputs[i])
	}

	all := filepath.Join(t.TempDir(), "all.db")
	merge := []string{"merge", "--output", all}
	for i := range nodes {
		merge = append(merge, filepath.Join(out, fmt.Sprintf("rank%d_results.db", i)))
	}
	b, err := exec.Command(cli, merge...).CombinedOutput()
	require.NoError(t, err, "%s", b)
	tl := t.TempDir()
	b, err = exec.Command(cli, "convert", "-i", all, "-f", "pftrace", "-d", tl, "-o", "job").CombinedOutput()
	require.NoError(t, err, "%s", b)
	trace, err := os.ReadFile(filepath.Join(tl, "job_results.pftrace"))
	require.NoError(t, err)

	slices := outputtest.ImportSlices(t, trace)
	// offset: the trace's clock minus realtime, from the marks.
	perHost := map[string][]int64{}
	var kernels []uint64
	for _, s := range slices {
		if m := markRE.FindStringSubmatch(s.Name); m != nil {
			rt, err := strconv.ParseInt(m[1], 10, 64)
			require.NoError(t, err)
			perHost[m[2]] = append(perHost[m[2]], int64(s.Start)-rt)
		} else if strings.HasPrefix(s.Name, "tiny(") {
			kernels = append(kernels, s.Start)
		}
	}
	require.Len(t, perHost, len(nodes), "marks of every node: %v", perHost)
	ref := perHost["node-a"][0]
	var worst int64
	for host, offs := range perHost {
		require.Len(t, offs, 5, host)
		for _, o := range offs {
			require.InDelta(t, ref, o, float64(time.Millisecond), "%s: a mark %.3f ms off the first node's clock", host, float64(o-ref)/1e6)
			worst = max(worst, o-ref, ref-o)
		}
	}
	t.Logf("the marks of %d nodes (boot clocks 0, +1 day, -1000 s apart) agree within %d ns", len(nodes), worst)
	require.Len(t, kernels, 20*len(nodes))
	for _, k := range kernels {
		rt := time.Unix(0, int64(k)-ref)
		require.True(t, !rt.Before(wallStart) && !rt.After(wallEnd), "a kernel at %v, outside the job's %v..%v", rt, wallStart, wallEnd)
	}

	// The job's manifest: each rank wrote its own, with no lock; `job`
	// lists the ranks with their nodes' clock offsets, and summary reads
	// every rank's database from the directory.
	b, err = exec.Command(cli, "job", out).CombinedOutput()
	require.NoError(t, err, "%s", b)
	job := string(b)
	require.Contains(t, job, `job "PMIX_NAMESPACE=multinode-test" (Open MPI): 3 ranks of 3 on 3 hosts, 0 failed`)
	for i, n := range nodes {
		// The clock offset column: the node's realtime-boottime offset
		// from the first node's, minus its boot clock's shift.
		row := regexp.MustCompile(fmt.Sprintf(`(?m)^\s*%d\s+%s\s+\d+\s+0\s+(\d+)\s+(-?[\d.]+)\s*$`, i, n.host)).FindStringSubmatch(job)
		require.NotNil(t, row, "rank %d: %s", i, job)
		recs, _ := strconv.Atoi(row[1])
		require.Equal(t, 5+20, recs, "rank %d: 5 marks and 20 kernels", i)
		off, _ := strconv.ParseFloat(row[2], 64)
		require.InDelta(t, -float64(n.offset/time.Millisecond), off, 5, "rank %d's clock offset (ms)", i)
	}
	var js []map[string]any
	b, err = exec.Command(cli, "job", "--json", out).Output()
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &js))
	require.Len(t, js, 3)
	b, err = exec.Command(cli, "summary", "-i", out, "--by-rank").CombinedOutput()
	require.NoError(t, err, "%s", b)
	for i := range nodes {
		require.Contains(t, string(b), "RANK "+strconv.Itoa(i)+" (PID ", "summary covers every rank:\n%s", b)
	}
}
