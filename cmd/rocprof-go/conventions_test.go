package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/launch"
	"github.com/rocprof-go/rocprof-go/internal/launch/launchtest"
)

// rocprof-go's own messages are text lines on stderr, terminal or not
// (tests run it on a pipe): "rocprof-go: warning: ..." with structured
// fields as key=value. Before, a pipe got zerolog's JSON lines.
func TestLogLinesAreText(t *testing.T) {
	env := []string{launch.LibDirEnv + "=" + launchtest.FakeLibDir(t)}
	r := runCLI(t, env, "--kernel-trace", "-q", "-d", t.TempDir(), "--timeout", "200ms", "--", "sleep", "5")
	require.Equal(t, 124, r.code, r.stderr)
	require.Regexp(t, `(?m)^rocprof-go: warning: the app ran past --timeout: sending SIGTERM to it and every process it started running="pid \d+ \(sleep\)" timeout=200ms$`, r.stderr)
	for _, l := range strings.Split(strings.TrimSpace(r.stderr), "\n") {
		require.True(t, strings.HasPrefix(l, "rocprof-go: "), "a text line: %q", l)
	}
}

// --log-format json (or ROCPROF_GO_LOG_FORMAT=json) makes every message
// rocprof-go prints one JSON object: the logger's, the plain warnings and
// notes, and errors, also those of a bad command line.
func TestLogFormatJSON(t *testing.T) {
	env := []string{launch.LibDirEnv + "=" + launchtest.FakeLibDir(t)}
	jsonLines := func(stderr string) []map[string]any {
		var out []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m), "a JSON line: %q", l)
			require.Equal(t, "rocprof-go", m["component"])
			require.NotEmpty(t, m["time"])
			out = append(out, m)
		}
		return out
	}
	for _, how := range [][]string{{"--log-format", "json"}, {"--log-format=json"}, nil} {
		e := env
		if how == nil {
			e = append(e, "ROCPROF_GO_LOG_FORMAT=json")
		}
		args := append(append([]string{}, how...), "--kernel-trace", "-d", t.TempDir(), "--timeout", "200ms", "--", "sleep", "5")
		r := runCLI(t, e, args...)
		require.Equal(t, 124, r.code, r.stderr)
		var timeout map[string]any
		for _, l := range jsonLines(r.stderr) {
			if l["message"] == "the app ran past --timeout: sending SIGTERM to it and every process it started" {
				timeout = l
			}
		}
		require.NotNil(t, timeout, r.stderr)
		require.Equal(t, "warn", timeout["level"])
		require.Equal(t, "200ms", timeout["timeout"])
		require.Contains(t, r.stderr, `"message":"the app was stopped after --timeout 200ms"`)
	}
	r := runCLI(t, env, "--log-format", "json", "--kernal-trace", "--", "true")
	require.Equal(t, 2, r.code)
	lines := jsonLines(r.stderr)
	require.Len(t, lines, 1)
	require.Equal(t, "error", lines[0]["level"])
	require.Equal(t, "option --kernal-trace: unrecognized option; did you mean --kernel-trace?", lines[0]["message"])

	// A plain warning (no tracing option) and a subcommand's error.
	r = runCLI(t, append(env, "ROCPROF_GO_LOG_FORMAT=json"), "-q", "-d", t.TempDir(), "--", "true")
	require.Equal(t, 0, r.code, r.stderr)
	warned := false
	for _, l := range jsonLines(r.stderr) {
		warned = warned || (l["level"] == "warn" && l["message"] == "no tracing options were enabled")
	}
	require.True(t, warned, r.stderr)
	r = runCLI(t, []string{"ROCPROF_GO_LOG_FORMAT=json"}, "summary", "-i", "/nonexistent.db")
	require.Equal(t, 1, r.code)
	require.Equal(t, "error", jsonLines(r.stderr)[0]["level"])

	r = runCLI(t, env, "--log-format", "xml", "--", "true")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `rocprof-go: error: option --log-format: invalid choice "xml" (choose from text, json)`)
}

// A bare rocprof-go prints a short usage that points to --help (exit 2,
// as a usage error), not "no application provided".
func TestBareCommandPrintsUsage(t *testing.T) {
	r := runCLI(t, nil)
	require.Equal(t, 2, r.code)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "usage: rocprof-go [options] -- <app> [args...]")
	require.Contains(t, r.stderr, "(commands: avail, batch, compare, completion, convert, job, merge, packets, summary)")
	require.Contains(t, r.stderr, "rocprof-go --help lists every option and command.")
	require.LessOrEqual(t, strings.Count(r.stderr, "\n"), 5, "short")
}

// A first word close to a subcommand that is no program on PATH gets a
// suggestion; a real program of such a name is still profiled.
func TestMisspelledSubcommand(t *testing.T) {
	for _, word := range []string{"sumary", "summ", "comapre", "covnert"} {
		r := runCLI(t, nil, word, "-i", "x.db")
		require.Equal(t, 2, r.code, word)
		require.Contains(t, r.stderr, "rocprof-go: error: unknown command \""+word+"\": did you mean", word)
	}
	r := runCLI(t, nil, "sumary")
	require.Contains(t, r.stderr, `did you mean "summary"? (rocprof-go --help lists the commands; to profile a program of that name, give its path: rocprof-go [options] -- ./sumary)`)
	// Far from every subcommand: the app to run, which is not there.
	r = runCLI(t, nil, "frobnicate")
	require.Equal(t, 127, r.code)
	require.Contains(t, r.stderr, `application "frobnicate" not found`)

	// A program named like a typo of a subcommand, on PATH, is profiled.
	bin := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(bin, "sumary"), []byte("#!/bin/sh\necho profiled\n"), 0o755))
	env := []string{launch.LibDirEnv + "=" + launchtest.FakeLibDir(t), "PATH=" + bin + ":" + os.Getenv("PATH")}
	r = runCLI(t, env, "sumary")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "profiled\n", r.stdout)
}

// `rocprof-go completion bash|zsh|fish` prints the shell's script (before,
// "completion" was taken for an app); the words come from the binary
// (cobra's __complete protocol): options, -f formats, --pmc counters of
// the --virtual-gpu architecture, subcommands and their flags' values.
func TestCompletion(t *testing.T) {
	for shell, want := range map[string]string{"bash": "__start_rocprof-go", "zsh": "#compdef rocprof-go", "fish": "complete -c rocprof-go"} {
		r := runCLI(t, nil, "completion", shell)
		require.Equal(t, 0, r.code, r.stderr)
		require.Contains(t, r.stdout, want, shell)
	}
	r := runCLI(t, nil, "completion")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "completion takes one shell: bash, zsh, fish")

	complete := func(words ...string) []string {
		t.Helper()
		r := runCLI(t, nil, append([]string{"__complete"}, words...)...)
		require.Equal(t, 0, r.code, r.stderr)
		var out []string
		for _, l := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
			if !strings.HasPrefix(l, ":") {
				w, _, _ := strings.Cut(l, "\t")
				out = append(out, w)
			}
		}
		return out
	}
	require.Equal(t, []string{"summary"}, complete("sum"))
	require.Equal(t, []string{"--kernel-trace", "--kernel-rename", "--kernel-include-regex", "--kernel-exclude-regex", "--kernel-iteration-range"}, complete("--kern"))
	require.Equal(t, []string{"csv"}, complete("-f", "c"))
	require.Equal(t, []string{"json", "pftrace", "otf2", "rocpd", "parquet", "--"}, complete("-f", "csv", ""))
	require.Equal(t, []string{"--virtual-gpu=gfx1030", "--virtual-gpu=gfx1100"}, complete("--virtual-gpu=gfx1"))
	require.Contains(t, complete("--pmc", "SQ_WAV"), "SQ_WAVES")
	// Counters of the architecture given: gfx90a has MFMA units, gfx1030 not.
	require.Equal(t, []string{"SQ_INSTS_MFMA"}, complete("--virtual-gpu", "gfx90a", "--pmc", "SQ_INSTS_MF"))
	require.Empty(t, complete("--virtual-gpu=gfx1030", "--pmc", "SQ_INSTS_MF"))
	require.Equal(t, []string{"usec"}, complete("summary", "-u", "u"))
	require.Equal(t, []string{"json"}, complete("summary", "--format", "j"))
	require.Equal(t, []string{"pftrace"}, complete("convert", "-f", "pf"))
	require.Contains(t, complete("summary", "--"), "--summary-units")
	require.Empty(t, complete("--kernel-trace", "--", "./ap"), "the app's words are files")

	// In a real bash with bash-completion, through the script.
	script := `source /usr/share/bash-completion/bash_completion
source <(rocprof-go completion bash)
t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]}-1)); COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}
  COMPREPLY=(); __start_rocprof-go rocprof-go "${COMP_WORDS[-1]}" "${COMP_WORDS[-2]}" 2>/dev/null; echo "${COMPREPLY[*]}"; }
t rocprof-go sum
t rocprof-go --kernel-tr
t rocprof-go --virtual-gpu=gfx1030 -f c
t rocprof-go --virtual-gpu=gfx1030 --pmc SQ_WAVES
`
	bin := filepath.Dir(cliBinary)
	cmd := exec.Command("bash", "-c", script)
	cmd.Env = append(os.Environ(), "PATH="+bin+":"+os.Getenv("PATH"))
	out, err := cmd.Output()
	require.NoError(t, err)
	require.Equal(t, "summary\n--kernel-trace\ncsv\nSQ_WAVES SQ_WAVES_sum\n", string(out))
}

// --version names the commit: the Makefile passes it with -ldflags -X
// (GOFLAGS=-buildvcs=false, common in containers, drops Go's own stamp).
func TestVersionNamesTheRevision(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "rocprof-go")
	out, err := exec.Command("go", "build", "-ldflags", "-X main.gitRevision=0123abcd", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, string(out))
	got, err := exec.Command(bin, "--version").Output()
	require.NoError(t, err)
	require.Contains(t, string(got), "    git_revision: 0123abcd\n")

	head, err := exec.Command("git", "rev-parse", "HEAD").Output()
	require.NoError(t, err)
	mk := exec.Command("make", "-n", "cli")
	mk.Dir = filepath.Join("..", "..")
	plan, err := mk.Output()
	require.NoError(t, err)
	require.Contains(t, string(plan), "-ldflags '-X main.gitRevision="+strings.TrimSpace(string(head)))
}

// Without /dev/kfd (no AMD GPU here) and without --virtual-gpu, the run
// says so before the app starts, naming --virtual-gpu; the app still runs
// (and fails on its own, as it would).
func TestNoGPUHint(t *testing.T) {
	_, err := os.Stat("/dev/kfd")
	require.True(t, os.IsNotExist(err), "this test runs where there is no AMD GPU driver, as on every machine of the project")
	app := sampleApp(t, "multistream")
	r := runCLI(t, []string{builtLibs(t)}, "--hip-trace", "-q", "-d", t.TempDir(), "--", app, "1", "1")
	require.NotEqual(t, 0, r.code)
	hint := strings.Index(r.stderr, "rocprof-go: warning: this machine has no AMD GPU driver (/dev/kfd is missing): a ROCm app will find no device (hipErrorNoDevice); add --virtual-gpu to run it")
	require.GreaterOrEqual(t, hint, 0, r.stderr)
	appErr := strings.Index(r.stderr, "hipError")
	require.Greater(t, appErr, hint, "said before the app ran, and the app ran:\n%s", r.stderr)
	r = runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--hip-trace", "-q", "-d", t.TempDir(), "--", app, "1", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stderr, "no AMD GPU")
}

// A binary built only for gfx90a under --virtual-gpu=gfx1030 ended in
// hipErrorNoBinaryForGpu (exit 134) with no hint: the run now reads the
// binary's code objects first and says which --virtual-gpu would work.
func TestCodeObjectHint(t *testing.T) {
	app := sampleApp(t, "multistream") // built for gfx90a
	r := runCLI(t, []string{builtLibs(t)}, "--virtual-gpu=gfx1030", "--kernel-trace", "-q", "-d", t.TempDir(), "--", app, "1", "1")
	require.Equal(t, 134, r.code, r.stderr)
	hint := strings.Index(r.stderr, "rocprof-go: warning: --virtual-gpu=gfx1030: "+app+" holds GPU code for gfx90a only, so HIP will find no kernel for gfx1030 (hipErrorNoBinaryForGpu): run it with --virtual-gpu=gfx90a, or rebuild it for gfx1030 (hipcc --offload-arch=gfx1030)")
	require.GreaterOrEqual(t, hint, 0, r.stderr)
	require.Greater(t, strings.Index(r.stderr, "hipErrorNoBinaryForGpu: Unable to find code object"), hint, "before the app ran, and the app ran")

	r = runCLI(t, []string{builtLibs(t)}, "--virtual-gpu=gfx1030", "--kernel-trace", "-q", "-d", t.TempDir(), "--", sampleApp(t, "gfx1030/memcheck"))
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr, "code for gfx1030: no warning")
}

// batch checks every job's options before the first job runs: before, the
// first job ran (an hour, say) and only then did job 2's typo stop the batch.
func TestBatchChecksEveryJobFirst(t *testing.T) {
	env := []string{launch.LibDirEnv + "=" + launchtest.FakeLibDir(t)}
	dir := t.TempDir()
	ran := filepath.Join(dir, "ran")
	file := filepath.Join(dir, "jobs.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`batch:
  - {name: first, command: [touch, `+ran+`], options: [--kernel-trace]}
  - {name: second, command: ["true"], options: [--kernel-trace, --stats=maybe]}
`), 0o600))
	r := runCLI(t, env, "batch", file, "-d", filepath.Join(dir, "out"))
	require.Equal(t, 2, r.code, r.stderr)
	require.Equal(t, `rocprof-go: error: batch job "second": option --stats: invalid truth value "maybe" (use one of y yes t true on 1 / n no f false off 0) (no job ran: fix its options in the batch file)`+"\n", r.stderr)
	require.NoFileExists(t, ran, "the first job did not run")
	require.NoDirExists(t, filepath.Join(dir, "out"))
}

// Profiling is parsed by internal/options, never by cobra (issue 35): the
// root command has no RunE of its own (execute sends every command line
// that is no subcommand to runProfile), and `help` still prints the
// profiling help that --help prints.
func TestRootCommandOnlyDispatches(t *testing.T) {
	root := newRootCmd()
	require.False(t, root.Runnable(), "the root's RunE would be dead code: execute never lets cobra run it")
	require.True(t, root.DisableFlagParsing, "completion hands the profiling words to completeProfile unparsed")
	h := runCLI(t, nil, "--help")
	require.Equal(t, 0, h.code)
	r := runCLI(t, nil, "help")
	require.Equal(t, 0, r.code)
	require.Equal(t, h.stdout, r.stdout)
}
