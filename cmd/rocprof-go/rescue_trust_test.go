package main

import (
	"crypto/sha256"
	"encoding"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// The rescue tests plant rescues as a killed rank leaves them (a manifest
// and pass_1/rpg-*.spool in OUTDIR/<hidden directory>/<name>) with n
// kernel dispatches each, and run convert on them.
const rescueDispatches = 40

// plantRescue writes a rescue named name in the hidden directory top.
func plantRescue(t *testing.T, top, name string, m launch.UnconvertedManifest, info tracing.ProcessInfo) string {
	t.Helper()
	d := filepath.Join(top, name)
	require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
	require.NoError(t, os.Chmod(top, 0o700))
	if m.State == "" {
		m.State = launch.RescueComplete
	}
	data, err := json.Marshal(m)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(d, launch.UnconvertedManifestName), data, 0o600))
	b := spooltest.New(info)
	outputtest.Emit(info.PID, rescueDispatches, func(r encoding.BinaryAppender) { b.Add(r) })
	_, err = b.WriteFile(filepath.Join(d, "pass_1"))
	require.NoError(t, err)
	return d
}

// deadPid is the pid of a process that has exited.
func deadPid(t *testing.T) int32 {
	c := exec.Command("true")
	require.NoError(t, c.Run())
	return int32(c.Process.Pid)
}

// rescueInfo is the header of a rescued app's spool: a process of this
// host that has exited.
func rescueInfo(t *testing.T) tracing.ProcessInfo {
	info := outputtest.Info(deadPid(t))
	info.Hostname, _ = os.Hostname()
	return info
}

// recoveredLines are convert's "recovered ..." lines.
func recoveredLines(stderr string) []string {
	return regexp.MustCompile(`(?m)^rocprof-go: recovered .*$`).FindAllString(stderr, -1)
}

// treeOf lists the files below dir (but not below skip) with their
// contents' sums.
func treeOf(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == skip && d.IsDir() {
			if err == nil {
				err = filepath.SkipDir
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = fmt.Sprintf("%x", sha256.Sum256(b))
		return err
	}))
	return out
}

// HIGH: root runs `convert -i DIR` on a shared output directory where a
// second user planted rescues whose manifests name another directory
// (standing in for /etc, with a 0600 file of root's), an output prefix
// climbing out of it ("../escaped") and formats. Nothing is written
// anywhere, root's file is untouched, and convert says whose the
// directories are and that they were not read; with an explicit -d, a
// planted prefix does not climb out of it either.
func TestConvertReadsNoOtherUsersRescue(t *testing.T) {
	uid, gid := testsys.SecondUser(t)
	shared := testsys.SharedDir(t)
	base := filepath.Dir(shared)
	etc := filepath.Join(base, "etc")
	require.NoError(t, os.Mkdir(etc, 0o755))
	victim := filepath.Join(etc, "victim_kernel_trace.csv")
	require.NoError(t, os.WriteFile(victim, []byte("root's own\n"), 0o600))

	// The planted directories: the name of older versions and root's own
	// per-user name, both the second user's.
	for i, name := range []string{".rocprof-go-unconverted", fmt.Sprintf(".rocprof-go-unconverted-%d", os.Geteuid())} {
		for j, prefix := range []string{"victim", "../escaped"} {
			plantRescue(t, filepath.Join(shared, name), fmt.Sprintf("rank%d-evil-%d", j, i), launch.UnconvertedManifest{
				Rank: fmt.Sprint(j), Host: "evil", PID: 1, OutputDir: etc, OutputFile: prefix, Formats: []string{"csv", "json"}}, rescueInfo(t))
		}
		require.NoError(t, filepath.Walk(filepath.Join(shared, name), func(p string, _ fs.FileInfo, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, uid, gid)
		}))
		require.NoError(t, os.Chmod(filepath.Join(shared, name), 0o755))
	}
	before := treeOf(t, base, "")

	r := runCLI(t, nil, "convert", "-i", shared)
	require.NotEqual(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
	require.Contains(t, r.stderr, fmt.Sprintf("belongs to uid %d, not to you (uid 0): not read", uid))
	require.Contains(t, r.stderr, "holds no rescue of yours")
	require.Empty(t, recoveredLines(r.stderr))
	require.Equal(t, before, treeOf(t, base, ""), "nothing written or replaced; stderr: %s", r.stderr)
	st, err := os.Stat(victim)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm())

	// summary neither reads them.
	r = runCLI(t, nil, "summary", "-i", shared, "--format", "csv")
	require.Contains(t, r.stderr, fmt.Sprintf("belongs to uid %d, not to you (uid 0): not read", uid))
	require.Empty(t, recoveredLines(r.stderr), r.stderr)
	require.NotContains(t, r.stdout, "KERNEL_DISPATCH", r.stdout)

	outd := filepath.Join(base, "conv", "d")
	r = runCLI(t, nil, "convert", "-i", shared, "-f", "csv", "-d", outd)
	require.NotEqual(t, 0, r.code, "stderr: %s", r.stderr)
	escaped, _ := os.ReadDir(filepath.Join(base, "conv"))
	for _, e := range escaped {
		require.NotContains(t, e.Name(), "escaped", "a planted prefix climbed out of -d")
	}
	require.Contains(t, r.stderr, "holds no rescue of yours")
	require.Equal(t, before, treeOf(t, base, filepath.Join(base, "conv")))
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	require.Equal(t, "root's own\n", string(b))
}

// A rescue in an output directory whose path holds '[' and '\' is found
// (it was a glob pattern's, which matched nothing: convert said the
// directory held no spools), and convert writes the files the rank would
// have written, in the directory the rescue is in.
func TestConvertFindsRescuesUnderABracketPath(t *testing.T) {
	out := filepath.Join(t.TempDir(), `run[1]\x`)
	plantRescue(t, filepath.Join(out, ".rocprof-go-unconverted"), "rank0-h-1", launch.UnconvertedManifest{
		Rank: "0", Host: "h", PID: 1, OutputDir: out, OutputFile: "res", Formats: []string{"csv"}}, rescueInfo(t))
	r := runCLI(t, nil, "convert", "-i", out)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Len(t, recoveredLines(r.stderr), 1, r.stderr)
	require.Equal(t, rescueDispatches, csvRows(t, filepath.Join(out, "res_kernel_trace.csv")))

	// A kept run directory there (its pass_N found by listing, not a glob).
	runDir := filepath.Join(out, "rocprof-go-run-k")
	require.NoError(t, os.MkdirAll(filepath.Join(runDir, "pass_1"), 0o700))
	info := rescueInfo(t)
	b := spooltest.New(info)
	outputtest.Emit(info.PID, rescueDispatches, func(r encoding.BinaryAppender) { b.Add(r) })
	_, err := b.WriteFile(filepath.Join(runDir, "pass_1"))
	require.NoError(t, err)
	conv := t.TempDir()
	r = runCLI(t, nil, "convert", "-i", runDir, "-f", "csv", "-d", conv, "-o", "kept")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Equal(t, rescueDispatches, csvRows(t, filepath.Join(conv, "kept_kernel_trace.csv")))
}

// What a manifest says chooses no directory: without -d, convert writes
// in the directory the rescue is in (the run's output directory, named by
// -i), not the manifest's output_directory; a manifest's output_file that
// is not a plain file name is refused, asking for -o.
func TestConvertDefaultsStayInTheRescuesDirectory(t *testing.T) {
	out, elsewhere := t.TempDir(), t.TempDir()
	top := filepath.Join(out, ".rocprof-go-unconverted")
	d := plantRescue(t, top, "rank0-h-1", launch.UnconvertedManifest{
		Rank: "0", Host: "h", PID: 1, OutputDir: elsewhere, OutputFile: "res", Formats: []string{"csv"}}, rescueInfo(t))
	r := runCLI(t, nil, "convert", "-i", out)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Equal(t, rescueDispatches, csvRows(t, filepath.Join(out, "res_kernel_trace.csv")))
	require.Empty(t, treeOf(t, elsewhere, ""), "nothing in the manifest's directory")

	require.NoError(t, os.RemoveAll(d))
	plantRescue(t, top, "rank0-h-2", launch.UnconvertedManifest{
		Rank: "0", Host: "h", PID: 2, OutputDir: out, OutputFile: "../up", Formats: []string{"csv"}}, rescueInfo(t))
	r = runCLI(t, nil, "convert", "-i", out)
	require.Equal(t, 1, r.code, "stderr: %s", r.stderr)
	require.Contains(t, r.stderr, `names the output file prefix "../up", which is not a file name in the output directory: give the prefix with -o PREFIX`)
	up, _ := filepath.Glob(filepath.Join(filepath.Dir(out), "up_*"))
	require.Empty(t, up)
	r = runCLI(t, nil, "convert", "-i", out, "-o", "mine")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Equal(t, rescueDispatches, csvRows(t, filepath.Join(out, "mine_kernel_trace.csv")))
}

// A rescue reached through a symbolic link (here one to another rescue of
// the directory) is not read: its records were counted twice.
func TestConvertCountsALinkedRescueOnce(t *testing.T) {
	out := t.TempDir()
	top := filepath.Join(out, ".rocprof-go-unconverted")
	d := plantRescue(t, top, "rank0-h-1", launch.UnconvertedManifest{Rank: "0", Host: "h", PID: 1, OutputDir: out}, rescueInfo(t))
	require.NoError(t, os.Symlink(d, filepath.Join(top, "rank1-h-2")))
	conv := t.TempDir()
	r := runCLI(t, nil, "convert", "-i", out, "-f", "csv", "-d", conv, "-o", "rec")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.Len(t, recoveredLines(r.stderr), 1, r.stderr)
	require.Equal(t, rescueDispatches, csvRows(t, filepath.Join(conv, "rec_kernel_trace.csv")))
	require.Contains(t, r.stderr, "rank1-h-2 is a symbolic link: not followed")
}

// One rescue whose manifest cannot be read does not stop the others: they
// are converted, the bad one is named, and convert exits non-zero (its
// records are left behind).
func TestConvertRecoversTheRestBesideABadManifest(t *testing.T) {
	out := t.TempDir()
	top := filepath.Join(out, ".rocprof-go-unconverted")
	plantRescue(t, top, "rank0-h-1", launch.UnconvertedManifest{Rank: "0", Host: "h", PID: 1, OutputDir: out}, rescueInfo(t))
	bad := plantRescue(t, top, "rank1-h-2", launch.UnconvertedManifest{Rank: "1", Host: "h", PID: 2, OutputDir: out}, rescueInfo(t))
	require.NoError(t, os.WriteFile(filepath.Join(bad, launch.UnconvertedManifestName), []byte(`{"rank": 1`), 0o600))
	conv := t.TempDir()
	r := runCLI(t, nil, "convert", "-i", out, "-f", "csv", "-d", conv, "-o", "rec")
	require.Equal(t, 1, r.code, "stderr: %s", r.stderr)
	require.Equal(t, rescueDispatches, csvRows(t, filepath.Join(conv, "rec_kernel_trace.csv")), "the readable rescue is converted")
	require.Len(t, recoveredLines(r.stderr), 1, r.stderr)
	require.Contains(t, r.stderr, filepath.Join(bad, launch.UnconvertedManifestName)+": not a rescue manifest")
	require.Contains(t, r.stderr, "1 rescue(s) could not be read, their records are not converted")
}

// Escape sequences in a manifest never reach the terminal: they are shown
// escaped.
func TestConvertEscapesManifestStrings(t *testing.T) {
	out := t.TempDir()
	plantRescue(t, filepath.Join(out, ".rocprof-go-unconverted"), "rank0-h-1", launch.UnconvertedManifest{
		Rank: "0\x1b[2J", Host: "h\x1b]0;pwned\x07", PID: 1, Reason: "\x1b[31mred", OutputDir: out, AppExitStatus: 1,
		OutputFile: "r\x1b[2J"}, rescueInfo(t))
	r := runCLI(t, nil, "convert", "-i", out, "-f", "csv", "json", "-d", t.TempDir())
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.NotContains(t, r.stderr, "\x1b")
	require.NotContains(t, r.stdout, "\x1b", "the files' names (the manifest's prefix) are printed escaped")
	require.Contains(t, r.stdout, `r\x1b[2J_kernel_trace.csv`)
	require.NotContains(t, r.stderr, "\x07")
	require.Contains(t, r.stderr, `recovered rank 0\x1b[2J (h\x1b]0;pwned\a, pid 1)`)
	require.Contains(t, r.stderr, `(\x1b[31mred, from`)
}

// An orphaned run directory whose owner file names a pid a later process
// was given (pid reuse) is recovered: a live process that is not the
// rocprof-go that wrote the owner file no longer hides it.
func TestConvertFindsAnOrphanWhosePidWasReused(t *testing.T) {
	sleeper := exec.Command("sleep", "120")
	require.NoError(t, sleeper.Start())
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	out := t.TempDir()
	top := filepath.Join(out, ".rocprof-go-unconverted")
	for i, owner := range []string{
		fmt.Sprint(sleeper.Process.Pid),       // an owner file of an older version: the pid alone
		fmt.Sprint(sleeper.Process.Pid, " 1"), // pid and a start time that is not the sleeper's
	} {
		d := filepath.Join(top, fmt.Sprintf("rocprof-go-run-%d", i))
		require.NoError(t, os.MkdirAll(filepath.Join(d, "pass_1"), 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, "owner"), []byte(owner), 0o600))
		info := rescueInfo(t)
		info.Environ = append(info.Environ, fmt.Sprintf("OMPI_COMM_WORLD_RANK=%d", i))
		b := spooltest.New(info)
		outputtest.Emit(info.PID, rescueDispatches, func(r encoding.BinaryAppender) { b.Add(r) })
		_, err := b.WriteFile(filepath.Join(d, "pass_1"))
		require.NoError(t, err)
	}
	require.NoError(t, os.Chmod(top, 0o700))
	conv := t.TempDir()
	r := runCLI(t, nil, "convert", "-i", out, "-f", "csv", "-d", conv, "-o", "rec")
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	lines := recoveredLines(r.stderr)
	require.Len(t, lines, 2, r.stderr)
	for _, l := range lines {
		require.Contains(t, l, fmt.Sprintf("pid %d)", sleeper.Process.Pid))
		require.Contains(t, l, "its rocprof-go was killed before its app ended")
	}
	require.Equal(t, 2*rescueDispatches, csvRows(t, filepath.Join(conv, "rec_kernel_trace.csv")))
	require.False(t, strings.Contains(r.stderr, "still runs"), r.stderr)
}
