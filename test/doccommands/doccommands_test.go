package doccommands

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
)

// block is one fenced block of a Markdown file.
type block struct {
	file string // relative to the repository
	line int    // of the opening fence
	lang string
	text string
}

func (b block) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

func repoDir(t testing.TB) string {
	d, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	return d
}

// docFiles are the files whose commands must run: README.md and docs/*.md.
func docFiles(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join(repoDir(t), "docs", "*.md"))
	require.NoError(t, err)
	sort.Strings(files)
	out := []string{"README.md"}
	for _, f := range files {
		out = append(out, filepath.Join("docs", filepath.Base(f)))
	}
	return out
}

// parseBlocks returns every fenced block of a Markdown file.
func parseBlocks(t testing.TB, rel string) []block {
	data, err := os.ReadFile(filepath.Join(repoDir(t), rel))
	require.NoError(t, err)
	var out []block
	var cur *block
	var text strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		trimmed := strings.TrimSpace(l)
		if strings.HasPrefix(trimmed, "```") {
			if cur == nil {
				cur = &block{file: rel, line: n, lang: strings.TrimPrefix(trimmed, "```")}
				text.Reset()
				continue
			}
			cur.text = text.String()
			out = append(out, *cur)
			cur = nil
			continue
		}
		if cur != nil {
			text.WriteString(l + "\n")
		}
	}
	require.NoError(t, sc.Err())
	require.Nil(t, cur, "%s: a fenced block is not closed", rel)
	return out
}

// notHere are the lines the test does not run, each with the reason. A
// line is matched by its start (after leading blanks).
var notHere = []struct{ prefix, reason string }{
	{"sudo make test", "CI itself (.ci/run: make test)"},
	{"make test", "CI itself (.ci/run: make test)"},
	{"sudo scripts/without-cpu-caches.sh make test", "CI itself (.ci/run runs make test this way)"},
	{"make lint", "CI itself (.ci/run: make lint)"},
	{"make build", "CI runs it (make test builds first)"},
	{"make vgpu", "CI runs it (make test builds the virtual GPU)"},
	{"make rocm-roots", "CI runs it (make test builds the ROCm matrix)"},
	{"make rocm-testapps", "CI runs it (make test builds the matrix's sample apps)"},
	{"make rocm-root-6.4", "CI runs it (make test builds every root)"},
	{"scripts/rocm-root.sh build ", "CI runs it (make rocm-roots)"},
	{"make guards", "CI runs it (.ci/run: make guards)"},
	{"make generate", "regenerates committed tables; genhip's TestGeneratedFilesUpToDate and genhsa's TestGeneratedFilesAreCurrent check in CI that they are current"},
	{"make bench", "a long benchmark run, kept out of CI by design"},
	{"make fuzz", "a long fuzzing run, kept out of CI by design (CI replays the seeds)"},
	{"make soak", "a long soak run, kept out of CI by design"},
	{"make reliability", "the reliability tests run in CI through go test ./test/reliability; the bench is long"},
	{"go test -run '^$' -bench", "a benchmark, kept out of CI by design"},
	{"scripts/rocm-root.sh run build/rocm/6.4 [--bind PATH]", "a synopsis, not a command"},
	{"LD_PRELOAD=... HSA_TOOLS_LIB=...", "shows the variables' names; vgpu's TestSampleApps runs the real ones"},
	{"rocprof-go --att --att-library-path /opt/rocm/lib", "needs AMD's trace decoder library, which is not available here (the decoder path is tested with a stand-in decoder: internal/att)"},
}

// substitutions make placeholders concrete ($REPO is the repository).
var substitutions = []struct{ from, to string }{
	{"/dev/shm/rocprof-go-run-XXXX", "kept-run"},
	{"<rocprof-go>", "$REPO"},
	{"/shared/prof/", "shared-prof/"},
	{"-d /shared/prof", "-d shared-prof"},
	// make demo's recipe is scripts/demo.sh after `make build`, which CI
	// has run (a second make here would rebuild the payload under the
	// other test packages' feet).
	{"sudo make demo", `"$REPO"/scripts/demo.sh`},
	{"make demo", `"$REPO"/scripts/demo.sh`},
}

// inRepo are the commands a developer types in the repository's root.
var inRepo = []string{"make ", "scripts/rocm-root.sh "}

// promises are what a command's text says it leaves behind: globs that
// must match after the block ran (relative to the sandbox).
var promises = map[string][]string{
	"rocprof-go -i input.txt -f csv -d out -- ./app":                     {"out/pmc_1/*/*_counter_collection.csv", "out/pmc_2/*/*_counter_collection.csv"},
	"rocprof-go --kernel-trace --memory-copy-trace -o run -f csv":        {"run_kernel_trace.csv", "run_memory_copy_trace.csv"},
	"rocprof-go convert -i results.db -f csv":                            {"rocpd-output-data/out_kernel_trace.csv"},
	"rocprof-go convert -i all.db -f csv pftrace -d converted -o run1":   {"converted/run1_kernel_trace.csv", "converted/run1_results.pftrace"},
	"rocprof-go merge --output all.db":                                   {"all.db"},
	"rocprof-go summary -i a.db b.db --format csv -o s.csv":              {"s.csv"},
	"rocprof-go compare --format junit -o compare.xml":                   {"compare.xml"},
	"rocprof-go compare --format markdown -o comment.md":                 {"comment.md"},
	"rocprof-go batch jobs.yaml -d results --keep-going":                 {"results/small", "results/crash"},
	"rocprof-go convert -i all.db -f parquet --parquet-hive -d profiles": {"profiles/*domain=kernels*"},
}

// exits are the statuses commands (without their comment) end with when
// not 0, and why.
// (None today: `rocprof-go avail` lists the virtual GPU the sandbox's config
// file names, as -L does.)
var exits = map[string]int{}

// fixtures makes the files the documentation's commands read, once; each
// document then gets a copy.
func fixtures(t *testing.T) string {
	repo := repoDir(t)
	dir := t.TempDir()
	for _, d := range []string{"bin", "config/rocprof-go", "build-base", "build-new"} {
		require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	require.NoError(t, os.Symlink(filepath.Join(repo, "build", "rocprof-go"), filepath.Join(dir, "bin", "rocprof-go")))
	// Commands written for the repository's root name build/...
	require.NoError(t, os.Symlink(filepath.Join(repo, "build"), filepath.Join(dir, "build")))
	// DuckDB's command line is not packaged for Debian: a stand-in that runs
	// `duckdb -c SQL` (or SQL on stdin) in rocprof-go's DuckDB engine.
	engine := filepath.Join(repo, "build", "rocprof-go-duckdb")
	require.FileExists(t, engine, "run make build first")
	writeFile(t, filepath.Join(dir, "bin", "duckdb"), "#!/bin/sh\n[ \"$1\" = -c ] && exec "+engine+" -- \"$2\"\nexec "+engine+" -- \"$(cat)\"\n", 0o755)
	// A CPU-only machine: every run goes to the virtual GPU, as the docs
	// tell CI runners to do with the config file.
	writeFile(t, filepath.Join(dir, "config", "rocprof-go", "config.yaml"), "virtual_gpu: gfx90a\n", 0o644)
	app := filepath.Join(repo, "build", "testdata", "docapp")
	for _, name := range []string{"app", "app-base", "app-new", "build-base/app", "build-new/app"} {
		copyFile(t, app, filepath.Join(dir, name))
	}
	writeFile(t, filepath.Join(dir, "input.txt"), "pmc: SQ_WAVES GRBM_COUNT\npmc: GRBM_GUI_ACTIVE\n", 0o644)
	writeFile(t, filepath.Join(dir, "events.json"), `[{"block": "SQ", "block_index": 0, "event_id": 4, "flags": 0}]`+"\n", 0o644)
	copyFile(t, filepath.Join(repo, "testdata", "apps", "hip_calls_regions.cpp"), filepath.Join(dir, "app.cpp"))
	for _, b := range parseBlocks(t, filepath.Join("docs", "scripting.md")) {
		if b.lang == "yaml" && strings.HasPrefix(b.text, "# jobs.yaml") {
			writeFile(t, filepath.Join(dir, "jobs.yaml"), b.text, 0o644)
		}
	}
	for _, b := range parseBlocks(t, filepath.Join("docs", "counters.md")) {
		if b.lang == "yaml" && strings.HasPrefix(b.text, "rocprofiler-sdk:") {
			writeFile(t, filepath.Join(dir, "my_counters.yaml"), b.text, 0o644)
		}
	}
	// Recorded runs: databases, run directories, ranks, Parquet.
	script := `
set -euo pipefail
run() { rocprof-go --kernel-trace --hip-trace --memory-copy-trace "$@" -- ./app 4096; }
db() { ls "$1"/*/*_results.db | head -1; }
run -d fx/r1; cp "$(db fx/r1)" results.db; cp results.db a.db; cp results.db base.db
run -d fx/r2; cp "$(db fx/r2)" b.db; cp b.db new.db
for r in 0 1; do OMPI_COMM_WORLD_RANK=$r run -d fx/rank$r; mkdir -p out_rank$r; cp "$(db fx/rank$r)" out_rank$r/results.db; done
run -d base; run -d new
for i in 1 2 3 4 5 6 7 8; do run -d base-$i; run -d new-$i; done
run -f rocpd parquet -d . -o out
OMPI_COMM_WORLD_RANK=0 run -f parquet --parquet-hive -d shared-prof
rm -rf fx
`
	sh := exec.Command("bash", "-c", script)
	sh.Dir = dir
	sh.Env = sandboxEnv(repo, dir)
	out, err := sh.CombinedOutput()
	require.NoError(t, err, "fixtures: %s", out)
	// A run's kept spools (what a full disk or a killed rocprof-go leaves).
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "kept-run", "pass_1"), 0o700))
	_, err = rocpdtest.RunSpool(filepath.Join(dir, "kept-run", "pass_1"), 4242, 100)
	require.NoError(t, err)
	return dir
}

func sandboxEnv(repo, dir string) []string {
	return append(os.Environ(), "PATH="+filepath.Join(dir, "bin")+":"+os.Getenv("PATH"),
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "REPO="+repo)
}

func writeFile(t *testing.T, path, content string, mode os.FileMode) {
	require.NoError(t, os.WriteFile(path, []byte(content), mode))
}

func copyFile(t *testing.T, from, to string) {
	data, err := os.ReadFile(from)
	require.NoError(t, err, "run make build first")
	st, err := os.Stat(from)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(to, data, st.Mode()))
}

// prepare turns a block into the script that runs it: placeholders
// substituted, lines that cannot run here replaced by a note, and lines
// with a documented non-zero status checked for it. It returns the
// script and the lines it did not run.
func prepare(text string) (string, []string) {
	for _, s := range substitutions {
		text = strings.ReplaceAll(text, s.from, s.to)
	}
	var out []string
	var skipped []string
	for _, l := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		cmd := strings.TrimSpace(l)
		done := false
		for _, n := range notHere {
			if strings.HasPrefix(cmd, n.prefix) {
				out = append(out, ": # not run here: "+n.reason)
				skipped = append(skipped, cmd)
				done = true
				break
			}
		}
		if done {
			continue
		}
		if code, ok := exits[stripComment(cmd)]; ok {
			l = fmt.Sprintf("if %s; then false; else [ $? -eq %d ]; fi", stripComment(cmd), code)
		}
		for _, p := range inRepo {
			if strings.HasPrefix(cmd, p) && !strings.HasSuffix(cmd, `\`) {
				l = fmt.Sprintf(`( cd "$REPO" && %s )`, stripComment(cmd))
			}
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n") + "\n", skipped
}

// stripComment drops a trailing " # comment" of a command line.
func stripComment(cmd string) string {
	if i := strings.Index(cmd, " # "); i > 0 {
		return strings.TrimSpace(cmd[:i])
	}
	return cmd
}

// runScript runs a script with bash -e in dir.
func runScript(t *testing.T, repo, dir, script string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", script)
	cmd.Dir = dir
	cmd.Env = sandboxEnv(repo, dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// commandBlock reports whether a block holds commands: sh and bash blocks
// and SQL queries; an untagged block must say what it is.
func commandBlock(t *testing.T, b block) bool {
	switch b.lang {
	case "sh", "bash", "sql":
		return true
	case "":
		t.Errorf("%s: untagged fenced block: tag it sh (commands, run by this test) or text (output)", b)
	}
	return false
}

// TestEveryDocumentedCommandRuns runs each document's command blocks in
// order, in a copy of the fixtures, and checks their exit status and what
// their text promises.
func TestEveryDocumentedCommandRuns(t *testing.T) {
	repo := repoDir(t)
	fx := fixtures(t)
	ran, notRun := 0, 0
	for _, file := range docFiles(t) {
		t.Run(strings.ReplaceAll(file, "/", "_"), func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "sandbox")
			out, err := exec.Command("cp", "-a", fx, dir).CombinedOutput()
			require.NoError(t, err, "%s", out)
			for _, b := range parseBlocks(t, file) {
				if !commandBlock(t, b) {
					continue
				}
				text := b.text
				if b.lang == "sql" {
					text = "duckdb <<'SQL'\n" + text + "SQL\n"
				}
				script, skipped := prepare(text)
				notRun += len(skipped)
				out, err := runScript(t, repo, dir, script)
				if err != nil {
					t.Errorf("%s failed (%v):\n--- script\n%s--- output\n%s", b, err, script, out)
					continue
				}
				ran++
				for prefix, globs := range promises {
					if !strings.Contains(b.text, prefix) {
						continue
					}
					for _, g := range globs {
						m, _ := filepath.Glob(filepath.Join(dir, g))
						if len(m) == 0 {
							t.Errorf("%s: %q promises %s, which is not there:\n%s", b, prefix, g, out)
						}
					}
				}
			}
		})
	}
	t.Logf("RESULT documented command blocks: %d ran, %d lines listed as not run here", ran, notRun)
}

// A new user needs two commands: one that runs the main job on the virtual
// GPU and one that passes the tests, each installing what it needs (make
// deps is a prerequisite of both).
func TestSetupIsTwoCommands(t *testing.T) {
	var setup []string
	for _, b := range parseBlocks(t, "README.md") {
		if b.lang == "sh" && strings.Contains(b.text, "make demo") {
			for _, l := range strings.Split(strings.TrimSpace(b.text), "\n") {
				setup = append(setup, stripComment(strings.TrimSpace(l)))
			}
			break
		}
	}
	require.Equal(t, []string{"sudo make demo", "sudo make test"}, setup)
	for _, target := range []string{"demo", "test"} {
		out, err := exec.Command("make", "-C", repoDir(t), "-n", target).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "apt-get install", "make %s installs the Debian packages it needs (make deps)", target)
		require.Contains(t, string(out), "go mod download", "make %s fetches the Go modules", target)
	}
}

// helpExample finds the example command lines of a --help text: indented
// lines starting with "rocprof-go " before the usage section.
var helpExample = regexp.MustCompile(`(?m)^[ \t]{2,}(rocprof-go [^\n]*)$`)

// TestHelpExamplesRun runs the examples each subcommand's --help shows.
func TestHelpExamplesRun(t *testing.T) {
	repo := repoDir(t)
	fx := fixtures(t)
	cli := filepath.Join(repo, "build", "rocprof-go")
	examples := 0
	for _, sub := range []string{"", "batch", "packets", "avail", "convert", "summary", "compare", "merge"} {
		args := []string{"--help"}
		if sub != "" {
			args = []string{sub, "--help"}
		}
		help, err := exec.Command(cli, args...).CombinedOutput()
		require.NoError(t, err, "%s", help)
		long := string(help)
		if i := strings.Index(long, "\nUsage:"); i >= 0 {
			long = long[:i]
		}
		for _, m := range helpExample.FindAllStringSubmatch(long, -1) {
			line := m[1]
			if strings.Contains(line, "[flags]") || strings.Contains(line, "<command>") || strings.Contains(line, "ARCH") {
				continue // a synopsis
			}
			dir := filepath.Join(t.TempDir(), "sandbox")
			out, err := exec.Command("cp", "-a", fx, dir).CombinedOutput()
			require.NoError(t, err, "%s", out)
			if strings.Contains(line, "summary -i all.db") {
				line = "rocprof-go merge --output all.db out_rank*/results.db && " + line
			}
			script, _ := prepare(line)
			examples++
			if out, err := runScript(t, repo, dir, script); err != nil {
				t.Errorf("rocprof-go %s --help shows %q, which fails (%v):\n%s", sub, m[1], err, out)
			}
		}
	}
	t.Logf("RESULT --help examples: %d ran", examples)
	require.GreaterOrEqual(t, examples, 12, "the subcommands' help texts show examples")
}
