package main

import (
	"encoding"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/output/rocpd"
	"github.com/rocprof-go/rocprof-go/internal/pipeline"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// dedupDispatches is each rank's kernel dispatches in the summary tests.
const dedupDispatches = 30

// dedupRank writes what rank r of a 2-rank job left in out: its spool (in
// spoolDir), its database named db and its rank manifest naming it,
// written by a rocprof-go of pid cliPID that started at started.
func dedupRank(t *testing.T, out, spoolDir, db string, r, cliPID int, started time.Time) (spool string, info tracing.ProcessInfo) {
	t.Helper()
	info = outputtest.Info(deadPid(t))
	info.Hostname, _ = os.Hostname()
	info.Environ = append(info.Environ, "OMPI_COMM_WORLD_RANK="+strconv.Itoa(r), "OMPI_COMM_WORLD_SIZE=2")
	b := spooltest.New(info)
	outputtest.Emit(info.PID, dedupDispatches, func(rec encoding.BinaryAppender) { b.Add(rec) })
	require.NoError(t, os.MkdirAll(spoolDir, 0o700))
	spool, err := b.WriteFile(spoolDir)
	require.NoError(t, err)
	require.NoError(t, rocpd.Write(filepath.Join(out, db), &model.Input{Spools: []string{spool}}))
	require.NoError(t, pipeline.WriteManifest(out, &pipeline.Manifest{Version: pipeline.Version, PID: cliPID, Host: info.Hostname,
		Started: started, Finished: started.Add(time.Second),
		Rank:  &pipeline.ManifestRank{Launcher: "Open MPI", Job: "PMIX_NAMESPACE=dedup", Rank: strconv.Itoa(r), Size: "2"},
		Files: []pipeline.ManifestFile{{Path: db, Format: "rocpd", Domain: "kernel_dispatch", Records: dedupDispatches}}}))
	return spool, info
}

// kernelCalls is the summary's KERNEL_DISPATCH calls (JSON).
func kernelCalls(t *testing.T, stdout string) int64 {
	t.Helper()
	var s struct {
		Total struct {
			Domains []struct {
				Name  string `json:"name"`
				Calls int64  `json:"calls"`
			} `json:"domain_summary"`
		} `json:"total"`
	}
	require.NoError(t, json.Unmarshal([]byte(stdout), &s), stdout)
	for _, d := range s.Total.Domains {
		if d.Name == "KERNEL_DISPATCH" {
			return d.Calls
		}
	}
	return 0
}

// summary counts each rank once when a rank's records are both in its
// outputs and in a rescue of them: the files a rescued run's manifest
// lists are known by the run's identity (host, rocprof-go pid, start),
// whatever their names. Both ways a rank was counted twice before:
//   - -o with %env{}% (or %nid%): the rescue's prefix cannot be rebuilt
//     from its manifest, so the rank's own database was read beside it;
//   - a kill during cleanup leaves the run directory (an orphan: no -o
//     known at all) beside the outputs it had written.
func TestSummaryCountsARescuedRankOnce(t *testing.T) {
	t.Run("rescue of an -o with env", func(t *testing.T) {
		out := t.TempDir()
		started := time.Now().Add(-time.Minute)
		spool, info := dedupRank(t, out, t.TempDir(), "nid0001_results.db", 0, 4001, started)
		dedupRank(t, out, t.TempDir(), "nid0002_results.db", 1, 4002, started)
		top := filepath.Join(out, launch.UnconvertedDirOf(os.Geteuid()))
		d := filepath.Join(top, "rank0-h-4001")
		require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
		require.NoError(t, os.Chmod(top, 0o700))
		m := launch.UnconvertedManifest{Format: "rocprof-go-unconverted/1", State: launch.RescueComplete, Reason: "killed while its outputs were written",
			Rank: "0", Size: "2", Host: info.Hostname, PID: 4001, AppPID: int(info.PID), Pass: 1, OutputDir: out,
			OutputFile: "%env{NID}%_results", Formats: []string{"rocpd"}, Started: started.Add(30 * time.Second)}
		data, err := json.Marshal(m)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, launch.UnconvertedManifestName), data, 0o600))
		b, err := os.ReadFile(spool)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(d, "pass_1", filepath.Base(spool)), b, 0o600))

		r := runCLI(t, nil, "summary", "-i", out, "--format", "json")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stderr, "recovered rank 0")
		require.Equal(t, int64(2*dedupDispatches), kernelCalls(t, r.stdout), "rank 0 counted once: %s", r.stderr)
	})
	t.Run("orphan beside its outputs", func(t *testing.T) {
		out := t.TempDir()
		started := time.Now().Add(-time.Minute)
		cli := int(deadPid(t))
		top := filepath.Join(out, launch.UnconvertedDirOf(os.Geteuid()))
		run := filepath.Join(top, "rocprof-go-run-dedup")
		dedupRank(t, out, filepath.Join(run, "pass_1"), "nid0001_results.db", 0, cli, started)
		dedupRank(t, out, t.TempDir(), "nid0002_results.db", 1, cli+100000, started)
		require.NoError(t, os.Chmod(top, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(run, "owner"), []byte(strconv.Itoa(cli)+"\n"), 0o600))

		r := runCLI(t, nil, "summary", "-i", out, "--format", "json")
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stderr, "recovered rank 0")
		require.Equal(t, int64(2*dedupDispatches), kernelCalls(t, r.stdout), "rank 0 counted once: %s", r.stderr)
	})
}
