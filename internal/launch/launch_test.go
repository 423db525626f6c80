package launch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
	"github.com/rocprof-go/rocprof-go/internal/options"
)

func plan(t *testing.T, args ...string) *options.Plan {
	t.Helper()
	cl, err := options.ParseArgs(args)
	require.NoError(t, err)
	p, err := options.Resolve(cl, options.Sources{LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	return p
}

func runner(t *testing.T) *Runner {
	return &Runner{Libs: &Libraries{Dir: launchtest.FakeLibDir(t)}, Log: zerolog.Nop(), Stderr: os.Stderr,
		Environ: os.Environ(), SpoolRoot: t.TempDir()}
}

// runPasses runs every pass of p as internal/pipeline does, without
// outputs: Check, Begin, then RunPass per pass until an app fails.
func runPasses(r *Runner, p *options.Plan) ([]*Pass, error) {
	if err := r.Check(p); err != nil {
		return nil, err
	}
	run, err := r.Begin(p)
	if err != nil {
		return nil, err
	}
	defer run.Close()
	var passes []*Pass
	for i, cfg := range p.Passes {
		pass, err := run.RunPass(context.Background(), i+1, cfg)
		if err != nil {
			return passes, err
		}
		pass.WritingOutputs()
		if err := pass.OutputsWritten(nil); err != nil {
			return passes, err
		}
		passes = append(passes, pass)
		if pass.Process.ExitStatus != 0 {
			break
		}
	}
	return passes, nil
}

// runOne runs a one-pass plan.
func runOne(r *Runner, p *options.Plan) (*Pass, error) {
	passes, err := runPasses(r, p)
	if err != nil {
		return nil, err
	}
	return passes[0], nil
}

func TestExitCodesPassThrough(t *testing.T) {
	r := runner(t)
	out := t.TempDir()
	for _, tc := range []struct {
		script string
		want   int
	}{
		{"exit 0", 0},
		{"exit 7", 7},
		{"kill -KILL $$", 128 + 9},
		{"kill -SEGV $$", 128 + 11},
	} {
		res, err := runOne(r, plan(t, "--kernel-trace", "-d", out, "--", "sh", "-c", tc.script))
		require.NoError(t, err, tc.script)
		require.Equal(t, tc.want, res.Process.ExitStatus, tc.script)
	}
}

func TestEnvironmentReachesTheApp(t *testing.T) {
	out := t.TempDir()
	dump := filepath.Join(out, "env.txt")
	t.Setenv("LD_PRELOAD", "")
	t.Setenv("ROCPROF_KERNEL_TRACE", "1")        // stale switch from an outer run
	t.Setenv("ROCPROF_ATT_PARAM_GPU_INDEX", "3") // a thread-trace setting the shim would read
	t.Setenv("ROCPROF_GO_SHIM_DEBUG", "1")       // a debugging switch set by hand
	r := runner(t)                               // the environment the CLI received, with those
	_, err := runOne(r, plan(t, "--hip-trace", "--preload", "/lib/x/libfirst.so", "-d", out,
		"--virtual-gpu", "gfx908", "--", "sh", "-c", "env > "+dump))
	require.NoError(t, err)
	data, err := os.ReadFile(dump)
	require.NoError(t, err)
	env := string(data)
	require.Contains(t, env, "ROCPROF_HIP_RUNTIME_API_TRACE=1\n")
	require.NotContains(t, env, "ROCPROF_KERNEL_TRACE=", "the resolved configuration replaces inherited switches")
	require.NotContains(t, env, "ROCPROF_ATT_PARAM_GPU_INDEX=", "every variable the injected code reads is the run's (internal/toolenv.Replaced)")
	require.Contains(t, env, "ROCPROF_GO_SHIM_DEBUG=1\n", "switches set by hand pass through")
	require.Contains(t, env, "LD_PRELOAD="+filepath.Join(r.Libs.Dir, VGPULib)+":/lib/x/libfirst.so:"+
		filepath.Join(r.Libs.Dir, PreloadLib)+"\n", "the virtual GPU comes first: it plays the kernel")
	require.Contains(t, env, "HSA_TOOLS_LIB="+filepath.Join(r.Libs.Dir, ShimLib)+"\n",
		"HIP API tracing alone loads the shim, which only describes the agents (agent_info.csv)")
	require.Contains(t, env, VGPUArchEnv+"=gfx908\n")
	require.Contains(t, env, SpoolDirEnv+"=")
	// The launcher's TSC verdict, so that no profiled process runs cpuid
	// (a hypervisor trap) for it; x86 Linux always tells.
	require.Contains(t, env, TSCEnv+"="+tscOnce()+"\n")
	require.Contains(t, []string{"0", "1"}, tscOnce())
}

func TestSpoolDirIsPrivate(t *testing.T) {
	r := runner(t)
	out := t.TempDir()
	probe := filepath.Join(out, "mode.txt")
	_, err := runOne(r, plan(t, "--kernel-trace", "-d", out, "--", "sh", "-c",
		`stat -c %a "$ROCPROF_GO_SPOOL_DIR" > `+probe+`; stat -c %a "$(dirname "$ROCPROF_GO_SPOOL_DIR")" >> `+probe))
	require.NoError(t, err)
	data, _ := os.ReadFile(probe)
	require.Equal(t, "700\n700\n", string(data))
}

// Each pass of a three-line input file runs the app with its own
// counters and output directory (the pass loop itself is
// internal/pipeline's: TestPassesRunInOrder there).
func TestThreePmcLinesRunThreePasses(t *testing.T) {
	r := runner(t)
	out := t.TempDir()
	input := filepath.Join(t.TempDir(), "in.txt")
	require.NoError(t, os.WriteFile(input, []byte("pmc: SQ_WAVES\npmc: GRBM_COUNT\npmc: TCC_HIT\n"), 0o600))
	log := filepath.Join(out, "runs.txt")
	passes, err := runPasses(r, plan(t, "-i", input, "-d", out, "--", "sh", "-c",
		`echo "$ROCPROF_OUTPUT_PATH $ROCPROF_COUNTERS" >> `+log))
	require.NoError(t, err)
	require.Len(t, passes, 3)
	data, _ := os.ReadFile(log)
	require.Equal(t, strings.Join([]string{
		filepath.Join(out, "pmc_1") + " pmc: SQ_WAVES",
		filepath.Join(out, "pmc_2") + " pmc: GRBM_COUNT",
		filepath.Join(out, "pmc_3") + " pmc: TCC_HIT",
	}, "\n")+"\n", string(data))
	for i, p := range passes {
		require.Equal(t, i+1, p.N)
		require.Equal(t, filepath.Join(out, fmt.Sprintf("pmc_%d", i+1)), p.Dir)
		require.DirExists(t, p.Dir)
		require.Equal(t, fmt.Sprintf("pass_%d", i+1), filepath.Base(p.SpoolDir))
	}
}

func TestWaitsForOrphanedDescendants(t *testing.T) {
	r := runner(t)
	out := t.TempDir()
	marker := filepath.Join(out, "late.txt")
	start := time.Now()
	res, err := runOne(r, plan(t, "--kernel-trace", "-d", out, "--", "sh", "-c",
		`(sleep 0.5; echo done > `+marker+`) & exit 0`))
	require.NoError(t, err)
	require.Equal(t, 0, res.Process.ExitStatus)
	require.FileExists(t, marker, "the launcher returns only after the orphan finished")
	require.GreaterOrEqual(t, time.Since(start), 400*time.Millisecond)
}

func TestTimeoutStopsTheApp(t *testing.T) {
	r := runner(t)
	out := t.TempDir()
	start := time.Now()
	res, err := runOne(r, plan(t, "--kernel-trace", "--timeout", "300ms", "-d", out, "--", "sleep", "30"))
	require.NoError(t, err)
	require.True(t, res.Process.TimedOut)
	require.Equal(t, ExitTimeout, res.Process.ExitStatus)
	require.Less(t, time.Since(start), 10*time.Second)
}

func TestSignalsAreForwarded(t *testing.T) {
	r := runner(t)
	out := t.TempDir()
	got := filepath.Join(out, "sig.txt")
	ready := filepath.Join(out, "ready")
	go func() {
		for range 200 {
			if _, err := os.Stat(ready); err == nil {
				_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := runOne(r, plan(t, "--kernel-trace", "-d", out, "--", "sh", "-c",
		`trap 'echo TERM > `+got+`; exit 5' TERM; touch `+ready+`; while :; do sleep 0.05; done`))
	require.NoError(t, err)
	require.Equal(t, 5, res.Process.ExitStatus)
	data, _ := os.ReadFile(got)
	require.Equal(t, "TERM\n", string(data))
}

func TestMissingAppAndUnwritableDir(t *testing.T) {
	r := runner(t)
	_, err := runOne(r, plan(t, "--kernel-trace", "-d", t.TempDir(), "--", "no-such-app-xyz"))
	var nf *AppNotFoundError
	require.ErrorAs(t, err, &nf)
	require.Contains(t, err.Error(), "not found")

	file := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = runOne(r, plan(t, "--kernel-trace", "-d", file, "--", "true"))
	var od *OutputDirError
	require.ErrorAs(t, err, &od)
	require.Contains(t, err.Error(), "not a directory")
}

func TestEmbeddedLibrariesUnpackConcurrently(t *testing.T) {
	root := t.TempDir()
	errs := make(chan error, 8)
	dirs := make(chan string, 8)
	for range 8 {
		go func() {
			l, err := unpack(payload, root)
			errs <- err
			if l != nil {
				dirs <- l.Dir
			}
		}()
	}
	var first string
	for range 8 {
		require.NoError(t, <-errs)
		d := <-dirs
		if first == "" {
			first = d
		}
		require.Equal(t, first, d)
	}
	content, names, _, err := payloadContent(payload)
	require.NoError(t, err)
	require.NoError(t, verifyUnpacked(first, names, content))
	entries, _ := os.ReadDir(root)
	require.Len(t, entries, 1, "temporary unpack directories are cleaned up")
}

// A damaged cached library (truncated, edited) is found before it is used
// and replaced by the embedded one.
func TestEmbeddedLibrariesReplaceADamagedCopy(t *testing.T) {
	root := filepath.Join(t.TempDir(), "cache")
	l, err := unpack(payload, root)
	require.NoError(t, err)
	content, names, _, err := payloadContent(payload)
	require.NoError(t, err)
	require.NotEmpty(t, names, "run make build: the payload has no libraries")
	lib := filepath.Join(l.Dir, names[0])
	require.NoError(t, os.Truncate(lib, 100))
	require.Error(t, verifyUnpacked(l.Dir, names, content))
	l2, err := unpack(payload, root)
	require.NoError(t, err)
	require.Equal(t, l.Dir, l2.Dir)
	require.NoError(t, verifyUnpacked(l2.Dir, names, content), "the damaged copy was replaced")
	entries, err := os.ReadDir(filepath.Dir(l.Dir))
	require.NoError(t, err)
	require.Len(t, entries, 1, "nothing is left beside the cache directory")
	fi, err := os.Stat(filepath.Dir(l.Dir))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), fi.Mode().Perm())
}

// A cache directory that is a symbolic link, sits in a directory others can
// write (not sticky), or belongs to another user is refused; EmbeddedLibraries
// then falls back to a private directory.
func TestCacheOnAPathOthersControlIsRefused(t *testing.T) {
	base := t.TempDir()
	// A symlink planted where the cache goes.
	target := filepath.Join(base, "elsewhere")
	require.NoError(t, os.Mkdir(target, 0o700))
	require.NoError(t, os.Symlink(target, filepath.Join(base, "linked")))
	_, err := unpack(payload, filepath.Join(base, "linked"))
	var ue *UnsafeCacheError
	require.ErrorAs(t, err, &ue)
	require.Contains(t, err.Error(), "a symbolic link")

	// A parent writable by everyone, without the sticky bit.
	open := filepath.Join(base, "open")
	require.NoError(t, os.Mkdir(open, 0o777))
	require.NoError(t, os.Chmod(open, 0o777))
	_, err = unpack(payload, filepath.Join(open, "cache"))
	require.ErrorAs(t, err, &ue)
	require.Contains(t, err.Error(), "writable by others (mode 0777)")

	// The same with the sticky bit (/tmp) is fine.
	sticky := filepath.Join(base, "sticky")
	require.NoError(t, os.Mkdir(sticky, 0o777))
	require.NoError(t, os.Chmod(sticky, 0o777|os.ModeSticky))
	_, err = unpack(payload, filepath.Join(sticky, "cache"))
	require.NoError(t, err)

	// Another user's directory under the sticky one.
	if os.Geteuid() == 0 {
		theirs := filepath.Join(sticky, "theirs")
		require.NoError(t, os.Mkdir(theirs, 0o755))
		require.NoError(t, os.Chown(theirs, 4242, 4242))
		_, err = unpack(payload, theirs)
		require.ErrorAs(t, err, &ue)
		require.Contains(t, err.Error(), "owned by uid 4242, not by you (uid 0)")
	}
}

// --timeout bounds the whole run: the app exits at once, but a process it
// started (a daemon that ignores SIGTERM) runs on; at the deadline it is
// stopped too, and the run reports the timeout.
func TestTimeoutStopsTheAppsDescendants(t *testing.T) {
	r := runner(t)
	out := t.TempDir()
	start := time.Now()
	res, err := runOne(r, plan(t, "--kernel-trace", "--timeout", "500ms", "-d", out, "--",
		"sh", "-c", `(trap '' TERM; sleep 60) & exit 0`))
	require.NoError(t, err)
	require.True(t, res.Process.TimedOut)
	require.Equal(t, ExitTimeout, res.Process.ExitStatus)
	require.Less(t, time.Since(start), killGrace+3*time.Second, "SIGKILL after the grace period")
	require.Empty(t, treeOf(os.Getpid()), "nothing of the run is left")
}

// A grandchild still running under a live parent at the timeout is stopped
// with the app: the whole tree, not only the direct children.
func TestTimeoutStopsGrandchildren(t *testing.T) {
	r := runner(t)
	out := t.TempDir()
	start := time.Now()
	res, err := runOne(r, plan(t, "--kernel-trace", "--timeout", "500ms", "-d", out, "--",
		"sh", "-c", `sh -c 'sleep 60; echo late' & wait`))
	require.NoError(t, err)
	require.Equal(t, ExitTimeout, res.Process.ExitStatus)
	require.Less(t, time.Since(start), 3*time.Second)
	require.Empty(t, treeOf(os.Getpid()))
}

// Issue 31: a spool root others can write without the sticky bit is
// refused when the user chose it and passed over when it is only TMPDIR;
// a sticky one (/tmp) is used.
func TestSpoolRootOthersCanChangeIsRefused(t *testing.T) {
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o777))
	_, err := (&Runner{SpoolRoot: open}).spoolRoot()
	var se *SpoolRootError
	require.ErrorAs(t, err, &se)
	require.Contains(t, err.Error(), open+" cannot be trusted (writable by others (mode 0777) without the sticky bit)")
	_, err = (&Runner{Environ: []string{SpoolRootEnv + "=" + open}}).spoolRoot()
	require.ErrorAs(t, err, &se)

	t.Setenv("TMPDIR", open)
	d, err := (&Runner{}).spoolRoot()
	require.NoError(t, err)
	require.Equal(t, "/dev/shm", d.Path())
	d.Close()

	require.NoError(t, os.Chmod(open, 0o777|os.ModeSticky))
	d, err = (&Runner{SpoolRoot: open}).spoolRoot()
	require.NoError(t, err)
	require.Equal(t, open, d.Path())
	d.Close()
}

// Issue 31: the private copy made when the cache cannot be trusted goes
// only where the cache could have gone: not to a TMPDIR others can write
// without the sticky bit.
func TestPrivateCopyAvoidsAnUntrustedTMPDIR(t *testing.T) {
	open := filepath.Join(t.TempDir(), "open")
	require.NoError(t, os.Mkdir(open, 0o755))
	require.NoError(t, os.Chmod(open, 0o777))
	t.Setenv("TMPDIR", open)
	l, err := unpackPrivate(payload)
	require.NoError(t, err)
	defer os.RemoveAll(l.Dir)
	require.True(t, strings.HasPrefix(l.Dir, "/tmp/rocprof-go-libs-"), l.Dir)
	content, names, _, err := payloadContent(payload)
	require.NoError(t, err)
	require.NoError(t, verifyUnpacked(l.Dir, names, content))
	entries, err := os.ReadDir(open)
	require.NoError(t, err)
	require.Empty(t, entries)
}

// Issue 31: a relative ROCPROF_GO_LIBDIR becomes an absolute directory,
// and a library others can change is not injected.
func TestLibDirIsAbsoluteAndChecked(t *testing.T) {
	dir := launchtest.FakeLibDir(t)
	wd, err := os.Getwd()
	require.NoError(t, err)
	require.NoError(t, os.Chdir(filepath.Dir(dir)))
	t.Cleanup(func() { os.Chdir(wd) })
	l, err := libDirLibraries(filepath.Base(dir))
	require.NoError(t, err)
	require.Equal(t, dir, l.Dir)
	p, err := l.Path(PreloadLib)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, PreloadLib), p)

	require.NoError(t, os.Chmod(p, 0o666))
	_, err = l.Path(PreloadLib)
	require.ErrorContains(t, err, "library "+p+" will not be injected: "+p+" cannot be trusted (writable by others (mode 0666))")
	require.NoError(t, os.Chmod(dir, 0o777))
	_, err = libDirLibraries(dir)
	require.ErrorContains(t, err, LibDirEnv+"="+dir+": "+dir+" cannot be trusted (writable by others (mode 0777) without the sticky bit)")
}

// Issue 31: a --preload library given as a relative path reaches
// LD_PRELOAD absolute; a bare name is left to the linker's search.
func TestRelativePreloadIsMadeAbsolute(t *testing.T) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	p := plan(t, "--preload", "lib/libuser.so", "--preload", "libbare.so", "--", "true")
	env := composeEnv(envSpec{cfg: p.Passes[0], preload: "/x/" + PreloadLib})
	require.Equal(t, filepath.Join(wd, "lib/libuser.so")+":libbare.so:/x/"+PreloadLib, env.Added["LD_PRELOAD"])
}
