package main

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/options"
	"github.com/rocprof-go/rocprof-go/internal/pipeline"
	"github.com/rocprof-go/rocprof-go/pkg/rocprof"
)

func sampleApp(t *testing.T, name string) string {
	t.Helper()
	app, err := filepath.Abs(filepath.Join("..", "..", "build", "testdata", name))
	require.NoError(t, err)
	require.FileExists(t, app, "run make build first")
	return app
}

// The end of every run says what it wrote and how to open it. The default
// run (no -f, no -d) writes ./<host>/<pid>_results.db: the report names it;
// a requested domain that recorded nothing is a note.
func TestRunReport(t *testing.T) {
	app := sampleApp(t, "multistream")
	env := []string{builtLibs(t)}
	r := runCLI(t, env, "--virtual-gpu", "--kernel-trace", "--marker-trace", "--", app, "2", "3")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "rocprof-go: wrote 1 file (./run.json lists them):\n")
	m := regexp.MustCompile(`(?m)^  (\./[^/ ]+/(\d+)_results\.db)  rocpd  (\d+) records$`).FindStringSubmatch(r.stderr)
	require.NotNil(t, m, r.stderr)
	require.NotEqual(t, "0", m[3])
	require.Contains(t, r.stderr, "  ROCpd: rocprof-go summary -i "+m[1]+" (tables); sqlite3 "+m[1]+" (SQL); rocprof-go convert -i "+m[1]+" -f pftrace (a timeline)\n")
	require.Contains(t, r.stderr, "rocprof-go: note: --marker-trace recorded nothing (no MARKER_API records): the app made no ROCTx call")
	require.NotContains(t, r.stderr, "--kernel-trace recorded nothing")

	// run.json counts the records of every domain, whatever the format.
	out := t.TempDir()
	r = runCLI(t, env, "--virtual-gpu", "--hip-trace", "--kernel-trace", "-f", "pftrace", "csv", "-d", out, "--", app, "2", "3")
	require.Equal(t, 0, r.code, r.stderr)
	man, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	for _, f := range man.Files {
		if f.Domain == "KERNEL_DISPATCH" {
			require.Equal(t, f.Records, man.DomainRecords["KERNEL_DISPATCH"], "the kernel trace's rows")
		}
	}
	require.Positive(t, man.DomainRecords["HIP_API"])
	require.Regexp(t, `(?m)^  Perfetto: open /\S+_results\.pftrace in https://ui\.perfetto\.dev$`, r.stderr)
	require.Contains(t, r.stderr, "  CSV: rocprofv3's columns (docs/outputs.md); rocprof-go summary -i "+out+" prints tables\n")
	require.NotContains(t, r.stderr, "recorded nothing")
	for _, f := range man.Files {
		require.Regexp(t, fmt.Sprintf(`(?m)^  %s +%s +%d records?$`, regexp.QuoteMeta(filepath.Join(out, f.Path)), f.Format, f.Records), r.stderr)
	}

	// -o stdout: the data went to the stream, and the report says so.
	r = runCLI(t, env, "--virtual-gpu", "--kernel-trace", "-f", "csv", "-o", "stdout", "-d", t.TempDir(), "--", app, "1", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `(?m)^  stdout KERNEL_DISPATCH +csv +\d+ records$`, r.stderr)

	// -q/--quiet: no report; the app's and rocprof-go's other output stay.
	r = runCLI(t, env, "--virtual-gpu", "--kernel-trace", "--marker-trace", "-q", "-d", t.TempDir(), "--", app, "1", "1")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)
	r = runCLI(t, env, "--virtual-gpu", "--kernel-trace", "--quiet=no", "-d", t.TempDir(), "--", app, "1", "1")
	require.Contains(t, r.stderr, "rocprof-go: wrote 1 file")

	// In the JSON log format the report is one message.
	r = runCLI(t, append(env, "ROCPROF_GO_LOG_FORMAT=json"), "--virtual-gpu", "--kernel-trace", "-d", t.TempDir(), "--", app, "1", "1")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	require.Len(t, lines, 1, r.stderr)
	var rec map[string]any
	require.NoError(t, json.Unmarshal([]byte(lines[0]), &rec))
	require.Equal(t, "info", rec["level"])
	require.True(t, strings.HasPrefix(rec["message"].(string), "wrote 1 file ("), rec["message"])
}

// Many processes write the same files once each: the report sums them up
// per file shape instead of listing every one.
func TestRunReportManyProcesses(t *testing.T) {
	app := sampleApp(t, "multistream")
	out := t.TempDir()
	r := runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--kernel-trace", "--hip-trace", "-f", "csv", "-d", out, "-o", "%pid%/run",
		"--", "sh", "-c", "for i in 1 2 3 4; do "+app+" 1 2; done")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "rocprof-go: wrote 12 files ("+out+"/run.json lists each with its records):\n")
	man, err := rocprof.LoadManifest(out)
	require.NoError(t, err)
	require.Regexp(t, fmt.Sprintf(`(?m)^  csv run_kernel_trace\.csv +4 files +%d records, e.g. %s/\d+/run_kernel_trace\.csv$`,
		man.DomainRecords["KERNEL_DISPATCH"], regexp.QuoteMeta(out)), r.stderr)
	require.Regexp(t, `(?m)^  csv run_hip_api_trace\.csv +4 files +\d+ records, e.g. `, r.stderr)
	require.Less(t, strings.Count(r.stderr, "\n"), 8, "short:\n%s", r.stderr)
}

// A run whose GPU stack found no GPU never blames the app for the domains
// it asked for and did not get: no "the app launched no kernel" note.
func TestReportBlamesNoAppWhenNoGPU(t *testing.T) {
	cl, err := options.ParseArgs([]string{"--kernel-trace", "--hip-trace", "--", "./app"})
	require.NoError(t, err)
	plan, err := options.Resolve(cl, options.Sources{LookupEnv: func(string) (string, bool) { return "", false }})
	require.NoError(t, err)
	m := &rocprof.Manifest{DomainRecords: map[string]int64{}, Files: []rocprof.ManifestFile{}}
	empty := emptyDomains(plan, m)
	require.Len(t, empty, 2, "without a GPU stack failure both empty domains are notes")
	require.Equal(t, ": the app launched no kernel", empty[0].why)

	m.NoGPU = []pipeline.NoGPU{{PID: 7, Reason: "hsa_init failed: HSA_STATUS_ERROR_OUT_OF_RESOURCES (0x1008)"}}
	require.Empty(t, emptyDomains(plan, m))
	var b strings.Builder
	writeReport(&b, plan, &pipeline.Result{Dir: t.TempDir(), Manifest: m})
	require.NotContains(t, b.String(), "recorded nothing")
	require.NotContains(t, b.String(), "launched no kernel")
}
