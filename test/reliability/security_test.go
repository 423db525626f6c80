package reliability

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The app's arguments reach it verbatim: rocprof-go execs the app directly,
// never through a shell, so shell syntax in an argument does nothing.
func TestArgumentsNeverPassThroughAShell(t *testing.T) {
	t.Parallel()
	canary := t.TempDir()
	args := []string{
		"$(touch " + canary + "/pwned1)",
		"`touch " + canary + "/pwned2`",
		"; touch " + canary + "/pwned3",
		"| touch " + canary + "/pwned4 &&",
		"${HOME}", "*", "a b  c", "'quoted'", `"double"`, "back\\slash", "",
	}
	res := profiled{opts: []string{"--hip-trace", "-f", "csv"}, argv: append([]string{app(t, "fault_inspect")}, args...)}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	for i, a := range args {
		require.Contains(t, res.stdout, fmt.Sprintf("arg[%d]=%s\n", i+1, a))
	}
	entries, err := os.ReadDir(canary)
	require.NoError(t, err)
	require.Empty(t, entries, "a shell ran part of an argument")
	report(t, "exit %d; %d arguments with shell syntax: all verbatim, no command ran", res.exit, len(args))
}

// The run's private directory and its pass directory are 0700 and owned by
// the user; each spool is a regular 0600 file with one link (created with
// O_CREAT|O_EXCL in the preload library, never through a pre-existing path);
// the run directory is removed after a successful run.
func TestPrivateDirectoryAndSpoolModes(t *testing.T) {
	t.Parallel()
	res := profiled{opts: []string{"--hip-trace", "--kernel-trace", "-f", "csv"}, argv: []string{app(t, "fault_inspect")}}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	uid := fmt.Sprintf("uid=%d", os.Getuid())
	var runDir string
	spools := 0
	for _, l := range strings.Split(res.stdout, "\n") {
		f := strings.Fields(l)
		if len(f) < 5 {
			continue
		}
		switch f[0] {
		case "rundir", "spooldir":
			require.Equal(t, []string{"mode=0700", uid, "type=dir"}, f[2:], l)
			if f[0] == "rundir" {
				runDir = f[1]
			}
		case "spool":
			// Every file there (the spool, the pass's notes file) is a
			// private regular file.
			require.Equal(t, []string{"mode=0600", uid, "type=file"}, f[2:], l)
			if strings.HasSuffix(f[1], ".spool") {
				spools++
			}
		}
	}
	require.NotEmpty(t, runDir, "the app reported no run directory:\n%s", res.stdout)
	require.Equal(t, 1, spools, "the app's own spool:\n%s", res.stdout)
	_, err := os.Stat(runDir)
	require.True(t, os.IsNotExist(err), "the run directory %s is removed after the run", runDir)
	report(t, "run dir and pass dir 0700, spool 0600 regular file, run dir removed afterwards (%s)", runDir)
}

// Secrets in the app's environment never reach an output file unless the
// user asks for the configuration to be written (--output-config). Every
// file of every output format is searched, binary ones (SQLite, Parquet,
// OTF2, Perfetto) byte by byte.
func TestNoSecretsInOutputs(t *testing.T) {
	t.Parallel()
	secret := fmt.Sprintf("s3cr3t-%d-canary", os.Getpid())
	env := []string{"AWS_SECRET_ACCESS_KEY=" + secret, "GITHUB_TOKEN=gh-" + secret, "DB_PASSWORD=pw-" + secret}
	opts := []string{"--kernel-trace", "--hip-trace", "--memory-copy-trace", "--marker-trace", "--stats", "--summary",
		"-f", "csv", "json", "pftrace", "otf2", "rocpd", "parquet"}
	res := profiled{opts: opts, argv: []string{app(t, "multistream"), "1", "1"}, env: env}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	require.NotContains(t, res.stdout+res.stderr, secret)
	leaks, files := filesContaining(t, res.dir, secret)
	require.Greater(t, files, 10, "every format wrote its files")
	// The ROCpd writer stores only a launcher's rank/size/job variables of
	// the app's environment unless --output-config asks for all of it.
	require.Empty(t, leaks, "files holding a secret from the app's environment")
	report(t, "exit %d; %d files in 6 formats searched; files holding the secret: %v (expected none)", res.exit, files, leaks)

	// With --output-config the configuration file may record the
	// environment; no other file may.
	res = profiled{opts: append([]string{"--output-config"}, opts...), argv: []string{app(t, "multistream"), "1", "1"}, env: env}.run(t)
	require.Equal(t, 0, res.exit, "stderr:\n%s", res.stderr)
	leaks, files = filesContaining(t, res.dir, secret)
	var unexpected []string
	for _, l := range leaks {
		if !strings.HasSuffix(l, "_config.json") && !strings.HasSuffix(l, "_results.db") {
			unexpected = append(unexpected, l)
		}
	}
	require.Empty(t, unexpected, "only the configuration and the ROCpd database may record the environment when asked")
	configs, _ := filepath.Glob(filepath.Join(res.dir, "*", "*_config.json"))
	require.Len(t, configs, 1, "--output-config writes <prefix>_config.json")
	report(t, "with --output-config: %d files, config files written: %d, files holding the secret: %v", files, len(configs), leaks)
}

// filesContaining walks dir and returns the files (relative paths) whose
// bytes contain s, and the number of files searched.
func filesContaining(t testing.TB, dir, s string) ([]string, int) {
	var hits []string
	n := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n++
		if bytes.Contains(data, []byte(s)) {
			rel, _ := filepath.Rel(dir, p)
			hits = append(hits, rel)
		}
		return nil
	}))
	return hits, n
}
