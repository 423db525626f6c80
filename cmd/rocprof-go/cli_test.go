package main

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

var cliBinary string

// TestMain builds the CLI once; the tests run it as a user would.
func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "rocprof-go-cli-test-")
	if err != nil {
		panic(err)
	}
	cliBinary = filepath.Join(dir, "rocprof-go")
	if out, err := exec.Command("go", "build", "-o", cliBinary, ".").CombinedOutput(); err != nil {
		os.RemoveAll(dir) // a panic skips the removal below
		panic(string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type cliResult struct {
	stdout, stderr string
	code           int
}

func runCLI(t *testing.T, env []string, args ...string) cliResult {
	t.Helper()
	cmd := exec.Command(cliBinary, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Dir = t.TempDir()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return cliResult{o.String(), e.String(), code}
}

func TestHelpListsEveryVisibleOption(t *testing.T) {
	r := runCLI(t, nil, "--help")
	require.Equal(t, 0, r.code)
	for _, s := range options.Specs {
		if s.Hidden {
			continue
		}
		require.Contains(t, r.stdout, "--"+s.Long, s.Long)
		if s.Short != "" {
			require.Contains(t, r.stdout, "-"+s.Short+", --"+s.Long)
		}
	}
}

func TestVersionBlock(t *testing.T) {
	r := runCLI(t, nil, "--version")
	require.Equal(t, 0, r.code)
	require.Contains(t, r.stdout, "         version: ")
	require.Contains(t, r.stdout, "    rocm_version: 5.2.3")
}

func TestAppExitCodeIsPreserved(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	r := runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "--kernel-trace", "--", "sh", "-c", "exit 7")
	require.Equal(t, 7, r.code, r.stderr)
}

func TestEchoShowsNegatedAggregate(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	r := runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "--sys-trace", "--hsa-trace=no", "--echo", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	lines := map[string]string{}
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && (f[1] == "on" || f[1] == "off") {
			lines[f[0]] = f[1]
		}
	}
	for _, d := range []string{"hsa-core-trace", "hsa-amd-trace", "hsa-image-trace", "hsa-finalizer-trace"} {
		require.Equal(t, "off", lines[d], d)
	}
	for _, d := range []string{"hip-runtime-trace", "hip-compiler-trace", "marker-trace", "kernel-trace",
		"memory-copy-trace", "memory-allocation-trace", "scratch-memory-trace"} {
		require.Equal(t, "on", lines[d], d)
	}
	require.Contains(t, r.stdout, `command: ["true"]`)
	require.NotContains(t, r.stdout, "ROCPROF_HSA_CORE_API_TRACE")
}

// Every tracing domain --echo exports to the injected code has its row, on
// (issue 35: --rccl-trace exported ROCPROF_RCCL_API_TRACE=1 with no row);
// a pmc_groups job's counters are shown too.
func TestEchoShowsEveryDomainItExports(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	input := filepath.Join(t.TempDir(), "in.yaml")
	require.NoError(t, os.WriteFile(input, []byte("jobs:\n  - pmc_groups: [[SQ_WAVES], [GRBM_COUNT]]\n"), 0o644))
	r := runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "--sys-trace", "--rccl-trace", "--advanced-thread-trace",
		"-i", input, "--echo", "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	rows := map[string]string{}
	exported := map[string]bool{}
	for _, l := range strings.Split(r.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) == 2 && (f[1] == "on" || f[1] == "off") {
			rows[f[0]] = f[1]
		}
		if k, v, ok := strings.Cut(strings.TrimSpace(l), "="); ok && v == "1" {
			exported[k] = true
		}
	}
	require.True(t, exported["ROCPROF_RCCL_API_TRACE"], r.stdout)
	n := 0
	for _, s := range options.Specs {
		if s.Kind == options.KindBool && s.Env != "" && strings.HasSuffix(s.Long, "-trace") && exported[s.Env] {
			require.Equal(t, "on", rows[s.Long], "%s exports %s but --echo shows no row for it:\n%s", s.Flag(), s.Env, r.stdout)
			n++
		}
	}
	require.GreaterOrEqual(t, n, 13, r.stdout)
	require.Contains(t, r.stdout, "counters: pmc_groups SQ_WAVES | GRBM_COUNT")
}

func TestThreeJobsMakeThreePassDirectories(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	out := t.TempDir()
	input := filepath.Join(t.TempDir(), "input.yaml")
	require.NoError(t, os.WriteFile(input, []byte("jobs:\n  - kernel_trace: true\n  - hip_trace: true\n  - memory_copy_trace: true\n"), 0o600))
	count := filepath.Join(out, "count.txt")
	r := runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "-i", input, "-d", out, "--", "sh", "-c", "echo run >> "+count)
	require.Equal(t, 0, r.code, r.stderr)
	data, _ := os.ReadFile(count)
	require.Equal(t, "run\nrun\nrun\n", string(data))
	for _, d := range []string{"pass_1", "pass_2", "pass_3"} {
		require.DirExists(t, filepath.Join(out, d))
	}
	m, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	require.Len(t, m.Passes, 3)
	require.Equal(t, "pass_3", m.Passes[2].Dir)
	require.Contains(t, r.stderr, "pass 3 of 3")
}

func TestBadInputGivesOneLineErrors(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	env := []string{launch.LibDirEnv + "=" + lib}
	dir := t.TempDir()
	badYAML := filepath.Join(dir, "bad.yaml")
	require.NoError(t, os.WriteFile(badYAML, []byte("jobs:\n  - pmc: [SQ_WAVES\n"), 0o600))
	badJSON := filepath.Join(dir, "bad.json")
	require.NoError(t, os.WriteFile(badJSON, []byte(`{"jobs": [}`), 0o600))
	notDir := filepath.Join(dir, "file")
	require.NoError(t, os.WriteFile(notDir, nil, 0o600))
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--kernel-trac", "--", "true"}, 2, "did you mean --kernel-trace"},
		{[]string{"--bogus", "--", "true"}, 2, "unrecognized option"},
		{[]string{"-i", badYAML, "--", "true"}, 1, "not valid YAML"},
		{[]string{"-i", badJSON, "--", "true"}, 1, "not valid JSON"},
		{[]string{"--kernel-trace", "--", "definitely-not-an-app"}, 127, "not found"},
		{[]string{"--kernel-trace", "-d", notDir, "--", "true"}, 1, "not writable"},
		{[]string{"--kernel-trace"}, 2, "no application provided"},
		{[]string{"--rocdecode-trace", "--", "true"}, 2, "not supported yet"},
	} {
		r := runCLI(t, env, tc.args...)
		require.Equal(t, tc.code, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.args)
		require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %q", r.stderr)
	}
	// Nothing is half-written into the output directory on a bad input file.
	out := filepath.Join(dir, "out")
	r := runCLI(t, env, "-i", badYAML, "-d", out, "--", "true")
	require.Equal(t, 1, r.code)
	require.NoDirExists(t, out)
}

var updateDocs = flag.Bool("update", false, "rewrite docs/options.md from --help")

// TestOptionsReferenceIsCurrent keeps docs/options.md (linked from the README)
// equal to --help; run `go test ./cmd/rocprof-go -run OptionsReference -update`.
func TestOptionsReferenceIsCurrent(t *testing.T) {
	r := runCLI(t, nil, "--help")
	require.Equal(t, 0, r.code)
	help, _, _ := strings.Cut(r.stdout, "\nCommands:")
	doc := "# rocprof-go option reference\n\nGenerated from `rocprof-go --help` " +
		"(`go test ./cmd/rocprof-go -run OptionsReference -update`); `rocprof-go --help` also lists\n" +
		"the subcommands, and `rocprof-go <command> --help` their flags.\n\n```text\n" + help + "\n```\n"
	path := filepath.Join("..", "..", "docs", "options.md")
	// What follows the generated block is written by hand (what rocprofv3's
	// options mean here); -update keeps it.
	tail := func(b []byte) string {
		_, after, _ := strings.Cut(string(b), "\n```\n")
		return after
	}
	if *updateDocs {
		old, _ := os.ReadFile(path)
		require.NoError(t, os.WriteFile(path, []byte(doc+tail(old)), 0o644))
	}
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, doc, strings.TrimSuffix(string(got), tail(got)), "docs/options.md is stale: run go test ./cmd/rocprof-go -run OptionsReference -update")
}

func TestBatchCommand(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`batch:
  - {name: ok, command: ["true"], options: [--kernel-trace]}
  - {name: bad, command: [sh, -c, "exit 9"], options: [--kernel-trace]}
  - {name: later, command: ["true"], options: [--kernel-trace]}
`), 0o600))
	out := filepath.Join(dir, "out")
	r := runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "batch", file, "-d", out)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stdout, "2 of 3 jobs ran: 1 ok, 1 failed, 1 not run")
	r = runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "batch", file, "-d", out, "--keep-going")
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stdout, "3 of 3 jobs ran: 2 ok, 1 failed")
	for _, d := range []string{"ok", "bad", "later"} {
		require.FileExists(t, filepath.Join(out, d, "run.json"))
	}
	r = runCLI(t, nil, "batch")
	require.Equal(t, 2, r.code)
}

func TestThreePmcLinesMakeThreePassDirectories(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	out := t.TempDir()
	input := filepath.Join(t.TempDir(), "input.txt")
	require.NoError(t, os.WriteFile(input, []byte("pmc: SQ_WAVES\npmc: GRBM_COUNT\npmc: GRBM_GUI_ACTIVE\n"), 0o600))
	count := filepath.Join(out, "count.txt")
	r := runCLI(t, []string{launch.LibDirEnv + "=" + lib}, "-i", input, "--virtual-gpu", "-d", out, "--",
		"sh", "-c", `echo "$ROCPROF_COUNTERS" >> `+count)
	require.Equal(t, 0, r.code, r.stderr)
	data, _ := os.ReadFile(count)
	require.Equal(t, "pmc: SQ_WAVES\npmc: GRBM_COUNT\npmc: GRBM_GUI_ACTIVE\n", string(data))
	for _, d := range []string{"pmc_1", "pmc_2", "pmc_3"} {
		require.DirExists(t, filepath.Join(out, d))
	}
	m, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	require.Equal(t, []string{"GRBM_GUI_ACTIVE"}, m.Passes[2].Counters)
}

func TestCountersAreValidatedBeforeTheAppStarts(t *testing.T) {
	lib := launchtest.FakeLibDir(t)
	out := t.TempDir()
	ran := filepath.Join(out, "ran")
	env := []string{launch.LibDirEnv + "=" + lib}
	r := runCLI(t, env, "--virtual-gpu", "--pmc", "SQ_WAVE", "-d", out, "--", "touch", ran)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, `did you mean "SQ_WAVES"`)
	r = runCLI(t, env, "--virtual-gpu", "--pmc", "SQ_WAVES", "SQ_INSTS_VALU", "SQ_INSTS_SALU", "SQ_INSTS_SMEM",
		"SQ_INSTS_LDS", "SQ_INSTS_FLAT", "SQ_INSTS_GDS", "SQ_INSTS_MFMA", "SQ_BUSY_CYCLES", "-d", out, "--", "touch", ran)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "collect them in 2 passes")
	require.Contains(t, r.stderr, "\npmc: SQ_BUSY_CYCLES")
	require.NoFileExists(t, ran, "the app never started")
}

// --virtual-gpu is refused before the app runs when the app cannot get it:
// a static program, or an architecture its ROCm runtime (the host's 5.2.3
// here) does not know. The errors say what to do.
func TestVirtualGPUPreflight(t *testing.T) {
	env := []string{launch.LibDirEnv + "=" + launchtest.FakeLibDir(t)}
	dir := t.TempDir()
	src := filepath.Join(dir, "s.c")
	require.NoError(t, os.WriteFile(src, []byte("#include <stdio.h>\nint main(void){puts(\"ran\");return 0;}\n"), 0o600))
	static := filepath.Join(dir, "static")
	out, err := exec.Command("cc", "-static", "-o", static, src).CombinedOutput()
	require.NoError(t, err, string(out))
	r := runCLI(t, env, "--virtual-gpu", "--hip-trace", "-d", dir, "--", static)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, "is statically linked; the virtual GPU is loaded with LD_PRELOAD, which a static program ignores: link it dynamically")
	require.NotContains(t, r.stdout, "ran", "nothing ran")

	dynamic := filepath.Join(dir, "dynamic")
	out, err = exec.Command("cc", "-o", dynamic, src).CombinedOutput()
	require.NoError(t, err, string(out))
	r = runCLI(t, env, "--virtual-gpu=gfx942", "--hip-trace", "-d", dir, "--", dynamic)
	require.Equal(t, 1, r.code)
	require.Regexp(t, `--virtual-gpu=gfx942: the ROCm runtime /\S+/libhsa-runtime64\.so\.1 does not know gfx942`, r.stderr)
	require.Contains(t, r.stderr, "choose an architecture it knows (gfx90a, gfx908, gfx906, gfx900, gfx1030), or run the app with ROCm 6.1 or later")
	require.NotContains(t, r.stdout, "ran")

	r = runCLI(t, env, "--virtual-gpu=gfx1201", "--", dynamic)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `invalid choice "gfx1201" (choose from gfx90a, gfx908, gfx906, gfx900, gfx1030, gfx942, gfx1100)`)
}
