package main

import (
	"bufio"
	"context"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
)

// These tests check the binary `make build` ships, build/rocprof-go, not the
// one TestMain builds: that one file must start on any glibc system.

// repoDir is the checkout; buildDir is where `make build` writes.
func repoDir() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

func buildDir() string {
	if d := os.Getenv("ROCPROF_GO_BUILD"); d != "" {
		return d
	}
	return filepath.Join(repoDir(), "build")
}

func shippedBinary(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(buildDir(), "rocprof-go"))
	require.NoError(t, err)
	require.FileExists(t, p, "run make build first")
	return p
}

// glibcLibraries are the only shared libraries build/rocprof-go may name
// in DT_NEEDED: every glibc system has them. Anything optional (OTF2) is
// opened with dlopen when it is used.
var glibcLibraries = map[string]bool{
	"libc.so.6": true, "libm.so.6": true, "libpthread.so.0": true, "libdl.so.2": true, "ld-linux-x86-64.so.2": true,
}

func TestBinaryNeedsOnlyGlibc(t *testing.T) {
	f, err := elf.Open(shippedBinary(t))
	require.NoError(t, err)
	defer f.Close()
	needed, err := f.ImportedLibraries()
	require.NoError(t, err)
	require.Contains(t, needed, "libc.so.6")
	for _, lib := range needed {
		require.True(t, glibcLibraries[lib], "build/rocprof-go needs %s (DT_NEEDED %v): only glibc's libraries may be linked; open optional ones with dlopen when they are used, as internal/output/otf2_cgo.go does for OTF2", lib, needed)
	}
	for _, tag := range []elf.DynTag{elf.DT_RPATH, elf.DT_RUNPATH} {
		paths, err := f.DynString(tag)
		require.NoError(t, err)
		require.Empty(t, paths, "%s: the binary must not depend on where it was built", tag)
	}
	interp := f.Section(".interp")
	require.NotNil(t, interp)
	data, err := interp.Data()
	require.NoError(t, err)
	require.Equal(t, "/lib64/ld-linux-x86-64.so.2", strings.TrimRight(string(data), "\x00"))
}

// otf2Entry reads a runtime's entry of configs/rocm-matrix.tsv: its Debian
// suite and the OTF2 library package installed in its root ("" for none).
// The host (5.2, bookworm) has OTF2 from make deps.
func otf2Entry(t *testing.T, rt rocmmatrix.Runtime) (suite, pkg string) {
	t.Helper()
	if rt.Root == "" {
		return "bookworm", "libopen-trace-format2-10"
	}
	f, err := os.Open(filepath.Join(repoDir(), "configs", "rocm-matrix.tsv"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		col := strings.Split(sc.Text(), "\t")
		if len(col) != 3 || col[0] != rt.Name {
			continue
		}
		if col[1] == "@suite" {
			suite = col[2]
		} else if strings.HasPrefix(col[1], "libopen-trace-format2-10") {
			pkg = col[1]
		}
	}
	require.NoError(t, sc.Err())
	return suite, pkg
}

// otf2Packages is the OTF2 library package of each suite of the matrix.
var otf2Packages = map[string]string{
	"bookworm": "libopen-trace-format2-10", "trixie": "libopen-trace-format2-10t64", "sid": "libopen-trace-format2-10u",
}

// hasOTF2 reports whether the runtime's file system holds an OTF2 library
// under one of the names Debian gives it.
func hasOTF2(rt rocmmatrix.Runtime) bool {
	for _, name := range []string{"libopen-trace-format2.so.10", "libopen_trace_format2.so.10"} {
		if _, err := os.Stat(filepath.Join(rt.Root, "/usr/lib/x86_64-linux-gnu", name)); err == nil {
			return true
		}
	}
	return false
}

// kernelNames counts the rows of a kernel_trace.csv by kernel name.
func kernelNames(t *testing.T, path string) (map[string]int, int) {
	t.Helper()
	rows := readCSVFile(t, path)
	require.NotEmpty(t, rows)
	col := -1
	for i, h := range rows[0] {
		if h == "Kernel_Name" {
			col = i
		}
	}
	require.GreaterOrEqual(t, col, 0, "no Kernel_Name column in %s", path)
	names := map[string]int{}
	for _, r := range rows[1:] {
		names[r[col]]++
	}
	return names, len(rows) - 1
}

// build/rocprof-go runs unchanged on every runtime of the ROCm matrix, in
// its root (Debian trixie, sid, experimental): it profiles a sample app's
// kernels on the virtual GPU, its embedded libraries unpacked there. With
// -f otf2 it writes an archive where the root has OTF2 (under sid's name
// too), and where it has not, fails with the error naming the package to
// install, after the CSV files, keeping the recorded data.
func TestBinaryProfilesInEveryROCmRoot(t *testing.T) {
	cli := shippedBinary(t)
	// The embedded libraries unpack into a cache under the test's temporary
	// directory, which the roots see, not into a root.
	onRuntimes(t, nil, func(t *testing.T, rt rocmmatrix.Runtime, cache string) {
		run := func(out string, formats ...string) (stderr string, code int) {
			args := append([]string{"--virtual-gpu", "--kernel-trace", "-f"}, formats...)
			args = append(args, "-d", out, "-o", "run", "--", filepath.Join(rt.Apps, "multistream"), "2", "3")
			return shippedOnRuntime(t, rt, cli, cache, 5*time.Minute, nil, args...)
		}

		out := t.TempDir()
		stderr, code := run(out, "csv")
		require.Equal(t, 0, code, "ROCm %s: %s", rt.Name, stderr)
		names, rows := kernelNames(t, filepath.Join(out, "run_kernel_trace.csv"))
		require.Equal(t, 6, names["vadd(float const*, float const*, float*, int)"], "ROCm %s: %v", rt.Name, names)
		require.Equal(t, 6, names["scale(float*, float, int)"], "ROCm %s: %v", rt.Name, names)
		// The rest are HIP's blit kernels for the device-to-device copies.
		require.GreaterOrEqual(t, rows, 18, "ROCm %s: %v", rt.Name, names)

		suite, pkg := otf2Entry(t, rt)
		out = t.TempDir()
		if pkg != "" {
			require.True(t, hasOTF2(rt), "ROCm %s: the root %s has no OTF2 library, though configs/rocm-matrix.tsv installs %s there: it was built before; rebuild the roots with `make rocm-roots` (as root)", rt.Name, rt.Root, pkg)
			stderr, code = run(out, "csv", "otf2")
			require.Equal(t, 0, code, "ROCm %s: %s", rt.Name, stderr)
			_, rows = kernelNames(t, filepath.Join(out, "run_kernel_trace.csv"))
			// otf2-print (the host's OTF2 tools) reads the archive: one
			// region entry per dispatch.
			print, err := exec.Command("otf2-print", filepath.Join(out, "run_results.otf2")).CombinedOutput()
			require.NoError(t, err, "%s", print)
			require.Len(t, regexp.MustCompile(`(?m)^ENTER\s`).FindAll(print, -1), rows, "ROCm %s", rt.Name)
			return
		}
		require.False(t, hasOTF2(rt), "ROCm %s: the root has OTF2, but configs/rocm-matrix.tsv does not install it", rt.Name)
		stderr, code = run(out, "csv", "otf2")
		require.Equal(t, 1, code, "ROCm %s: %s", rt.Name, stderr)
		require.Contains(t, stderr, "rocprof-go: error: the OTF2 library is not installed (-f otf2 loads libopen-trace-format2.so.10, "+
			"libopen_trace_format2.so.10 or libotf2.so.10): install Debian's "+otf2Packages[suite]+" (this is ")
		// Checked before the app starts: nothing ran, nothing is written.
		require.NotContains(t, stderr, "recorded data is kept", "the app must not have run")
		entries, err := os.ReadDir(out)
		require.NoError(t, err)
		require.Empty(t, entries, "nothing is written when OTF2 is missing")
	})
}

// onRuntimes runs f in a subtest per runtime of the ROCm matrix named in
// names, every runtime when there is none, each subtest named after its
// runtime. The runtime is checked (built) and sees cache, a directory for
// XDG_CACHE_HOME the test's runs share (the embedded libraries unpack there
// once): the roots bind /tmp; elsewhere the cache's parent is bound, and the
// build directory when it lies outside the repository (ROCPROF_GO_BUILD), as
// rocmmatrix.Ready does. A named runtime missing from the matrix fails the
// test: the checks on it would not run.
func onRuntimes(t *testing.T, names []string, f func(t *testing.T, rt rocmmatrix.Runtime, cache string)) {
	t.Helper()
	rts, err := rocmmatrix.Runtimes(repoDir(), buildDir())
	require.NoError(t, err)
	repo, err := filepath.Abs(repoDir())
	require.NoError(t, err)
	var on []rocmmatrix.Runtime
	for _, rt := range rts {
		if len(names) == 0 || slices.Contains(names, rt.Name) {
			on = append(on, rt)
		}
	}
	for _, n := range names {
		require.True(t, slices.ContainsFunc(on, func(rt rocmmatrix.Runtime) bool { return rt.Name == n }),
			"no ROCm %s in the matrix (configs/rocm-matrix.tsv)", n)
	}
	cache := t.TempDir()
	for _, rt := range on {
		t.Run(rt.Name, func(t *testing.T) {
			require.NoError(t, rt.Check())
			if !strings.HasPrefix(cache, "/tmp/") {
				rt = rt.WithBinds(filepath.Dir(cache))
			}
			if rel, err := filepath.Rel(repo, rt.Build()); err != nil || strings.HasPrefix(rel, "..") {
				rt = rt.WithBinds(rt.Build())
			}
			f(t, rt, cache)
		})
	}
}

// shippedOnRuntime runs the shipped CLI with args on runtime rt (inside its
// root for 6.x/7.x) with the test's environment less ROCPROF_GO_LIBDIR (the
// embedded libraries are what users run), the virtual GPU's settings and
// HSA_* variables, plus XDG_CACHE_HOME=cache (a directory the roots see)
// and env; it returns the CLI's stderr and exit code.
func shippedOnRuntime(t *testing.T, rt rocmmatrix.Runtime, cli, cache string, timeout time.Duration, env []string, args ...string) (string, int) {
	t.Helper()
	_, stderr, code := runAppOnRuntime(t, rt, cli, cache, timeout, env, args...)
	return stderr, code
}

// runAppOnRuntime is shippedOnRuntime keeping the app's standard output too.
func runAppOnRuntime(t *testing.T, rt rocmmatrix.Runtime, cli, cache string, timeout time.Duration, env []string, args ...string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := rt.Command(ctx, cli, args...)
	cmd.Env = append(append(environWithout("ROCPROF_GO_LIBDIR=", "ROCPROF_VGPU_", "HSA"), "XDG_CACHE_HOME="+cache), env...)
	var outb, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &outb, &errb
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return outb.String(), errb.String(), ee.ExitCode()
	}
	require.NoError(t, err)
	return outb.String(), errb.String(), 0
}

// environWithout is the test's environment less the variables whose
// NAME=value starts with one of prefixes.
func environWithout(prefixes ...string) []string {
	var env []string
	for _, e := range os.Environ() {
		if !slices.ContainsFunc(prefixes, func(p string) bool { return strings.HasPrefix(e, p) }) {
			env = append(env, e)
		}
	}
	return env
}
