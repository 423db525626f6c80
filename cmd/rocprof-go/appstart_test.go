package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

// ccProgram builds a C program in dir with cc.
func ccProgram(t *testing.T, dir, name, src string, args ...string) string {
	t.Helper()
	c := filepath.Join(dir, name+".c")
	require.NoError(t, os.WriteFile(c, []byte(src), 0o644))
	out := filepath.Join(dir, name)
	cmd := exec.Command("cc", append([]string{"-o", out, c}, args...)...)
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", b)
	return out
}

// toolLines are the lines rocprof-go printed (the app's own stderr, its
// loader's message, is inherited and also there).
func toolLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "rocprof-go:") {
			out = append(out, l)
		}
	}
	return out
}

// An app whose dynamic loader cannot find a library never runs: the run
// says so once, with the loader's message, exits with the app's status
// 127, and gives no note about what each domain did not record (on the
// code before, eight notes said the app made no HIP call, never
// initialised the HSA runtime, ...).
func TestAppThatCannotStartSaysSoOnce(t *testing.T) {
	dir := t.TempDir()
	lib := ccProgram(t, dir, "librpgmissing.so", "int rpg_missing(void) { return 0; }\n", "-shared", "-fPIC")
	app := ccProgram(t, dir, "needs-lib", "int rpg_missing(void);\nint main(void) { return rpg_missing(); }\n",
		"-L"+dir, "-l:librpgmissing.so")
	require.NoError(t, os.Remove(lib))
	out := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--sys-trace", "--stats", "-d", out, "--", app)
	require.Equal(t, 127, r.code, r.stderr)
	tool := toolLines(r.stderr)
	var naming []string
	for _, l := range tool {
		if strings.Contains(l, "librpgmissing.so") {
			naming = append(naming, l)
		}
	}
	require.Len(t, naming, 1, "one message names the missing library:\n%s", r.stderr)
	require.Contains(t, naming[0], "rocprof-go: error: the app could not start (exit status 127): "+app+
		": error while loading shared libraries: librpgmissing.so: cannot open shared object file: No such file or directory")
	require.Contains(t, naming[0], "LD_LIBRARY_PATH")
	require.NotContains(t, r.stderr, "recorded nothing", "no domain notes")
	require.LessOrEqual(t, len(tool), 2, "the failure and where run.json is, nothing else:\n%s", r.stderr)
	m, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	require.Equal(t, 127, m.ExitStatus)
	require.Contains(t, m.Error, "librpgmissing.so: cannot open shared object file")

	// A library without the symbol version the program was built with:
	// the loader says so and the app exits 1; the same one message.
	ver := t.TempDir()
	lib = filepath.Join(ver, "librpgver.so")
	src := "int rpg_ver(void) { return 0; }\n"
	require.NoError(t, os.WriteFile(filepath.Join(ver, "v2.map"), []byte("RPG_2 { global: rpg_ver; local: *; };\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(ver, "v1.map"), []byte("RPG_1 { global: rpg_ver; local: *; };\n"), 0o644))
	ccProgram(t, ver, "librpgver.so", src, "-shared", "-fPIC", "-Wl,-soname,librpgver.so", "-Wl,--version-script="+filepath.Join(ver, "v2.map"))
	verApp := ccProgram(t, ver, "needs-version", "int rpg_ver(void);\nint main(void) { return rpg_ver(); }\n", "-L"+ver, "-l:librpgver.so")
	ccProgram(t, ver, "librpgver.so", src, "-shared", "-fPIC", "-Wl,-soname,librpgver.so", "-Wl,--version-script="+filepath.Join(ver, "v1.map"))
	r = runCLI(t, []string{builtLibs(t), "LD_LIBRARY_PATH=" + ver}, "--virtual-gpu", "--hip-trace", "-d", t.TempDir(), "--", verApp)
	require.Equal(t, 1, r.code, r.stderr)
	require.Contains(t, r.stderr, "rocprof-go: error: the app could not start (exit status 1): "+verApp+": "+lib+": version `RPG_2' not found (required by "+verApp+")")
	require.NotContains(t, r.stderr, "recorded nothing")

	// The library back: the same program starts and is judged as any
	// other (it made no GPU call: those notes are right then).
	ccProgram(t, dir, "librpgmissing.so", "int rpg_missing(void) { return 127; }\n", "-shared", "-fPIC")
	r = runCLI(t, []string{builtLibs(t), "LD_LIBRARY_PATH=" + dir}, "--virtual-gpu", "--hip-trace", "-d", t.TempDir(), "--", app)
	require.Equal(t, 127, r.code, r.stderr)
	require.NotContains(t, r.stderr, "could not start")
	require.Contains(t, r.stderr, "rocprof-go: note: --hip-trace recorded nothing")

	// An app that made calls and exited 127 itself: its records and the
	// run's report as ever, the status passed on.
	sample := sampleApp(t, "multistream")
	r = runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--kernel-trace", "--marker-trace", "-d", t.TempDir(), "--",
		"sh", "-c", sample+" 1 1; exit 127")
	require.Equal(t, 127, r.code, r.stderr)
	require.NotContains(t, r.stderr, "could not start")
	require.Regexp(t, `kernel_trace\.csv|results\.db`, r.stderr)
	require.NotContains(t, r.stderr, "--kernel-trace recorded nothing")
	require.Contains(t, r.stderr, "--marker-trace recorded nothing")
}

// A program the system cannot execute although its file is there: a
// script whose #! interpreter, or an ELF program whose dynamic loader, does
// not exist. It is refused before anything runs, naming the interpreter,
// with the shell's status 127 (before, "no such file or directory" about
// the program itself, exit 1, and the output directory created).
func TestAppWithMissingInterpreterIsRefused(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.sh")
	require.NoError(t, os.WriteFile(script, []byte("#!/nonexistent/rpg-shell -e\necho hi\n"), 0o755))
	prog := ccProgram(t, dir, "prog", "int main(void) { return 0; }\n")
	b, err := os.ReadFile(prog)
	require.NoError(t, err)
	interp, err := exec.Command("sh", "-c", "readelf -l "+prog+" | sed -n 's/.*Requesting program interpreter: \\(.*\\)]/\\1/p'").Output()
	require.NoError(t, err)
	old := bytes.TrimSpace(interp)
	require.NotEmpty(t, old)
	bad := append([]byte{}, old...)
	bad[len(bad)-1] = 'X' // same length, a loader that does not exist
	require.Equal(t, 1, bytes.Count(b, old))
	badProg := filepath.Join(dir, "badloader")
	require.NoError(t, os.WriteFile(badProg, bytes.Replace(b, old, bad, 1), 0o755))

	for _, c := range []struct{ app, want string }{
		{script, "its #! line names the interpreter /nonexistent/rpg-shell, which does not exist: install it, or correct the #! line"},
		{badProg, "its dynamic loader (the ELF program interpreter) names the interpreter " + string(bad) + ", which does not exist"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		r := runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--hip-trace", "-d", out, "--", c.app)
		require.Equal(t, 127, r.code, r.stderr)
		tool := toolLines(r.stderr)
		require.Len(t, tool, 1, r.stderr)
		require.Contains(t, tool[0], `rocprof-go: error: application "`+c.app+`" cannot be run: `+c.want)
		require.NoDirExists(t, out, "nothing ran: nothing is left behind")
	}

	// Not executable, not found: as before.
	noexec := filepath.Join(dir, "noexec")
	require.NoError(t, os.WriteFile(noexec, b, 0o644))
	r := runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--hip-trace", "--", noexec)
	require.Equal(t, 127, r.code, r.stderr)
	require.Contains(t, r.stderr, noexec+" is not an executable file")
	r = runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--hip-trace", "--", filepath.Join(dir, "nosuch"))
	require.Equal(t, 127, r.code, r.stderr)
	require.Contains(t, r.stderr, "no such file or directory")
}
