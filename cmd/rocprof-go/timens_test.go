package main

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A child the app starts in a new time namespace whose boot clock is a day
// ahead (unshare --time --boottime 86400) stamps its records a day later
// than its parent's on the timeline: the run names it and the shift
// (before, nothing was said). The marks (ROCTx, each carrying the realtime
// it was made at) show the shift the warning names.
func TestChildInAnotherTimeNamespaceIsNamed(t *testing.T) {
	marks := sampleApp(t, "realtime_marks")
	out := filepath.Join(t.TempDir(), "out")
	r := runCLI(t, []string{builtLibs(t)}, "--virtual-gpu", "--marker-trace", "-f", "csv", "-d", out, "--",
		"sh", "-c", `"$0" 2 && exec unshare --fork --time --boottime 86400 "$0" 2`, marks)
	require.Equal(t, 0, r.code, r.stderr)
	w := regexp.MustCompile(`(?m)^rocprof-go: warning: pid (\d+) \(`+regexp.QuoteMeta(marks)+
		`\) ran in another time namespace than rocprof-go \(unshare --time, CLONE_NEWTIME\) whose boot clock is \+86400\.000 s from rocprof-go's: `+
		`the timestamps it took itself \(API calls, markers\) are on that clock, 86400\.000 s off the other processes' on a timeline; `).FindAllStringSubmatch(r.stderr, -1)
	require.Len(t, w, 1, "one process named:\n%s", r.stderr)

	// Each process's marks: timestamp minus the realtime the mark names.
	files, err := filepath.Glob(filepath.Join(out, "*", "*_marker_api_trace.csv"))
	require.NoError(t, err)
	require.Len(t, files, 2)
	shift := map[string]int64{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		rows, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		require.NoError(t, err)
		require.Len(t, rows, 3, f)
		rt, err := strconv.ParseInt(strings.TrimPrefix(strings.Fields(rows[1][1])[0], "rt="), 10, 64)
		require.NoError(t, err)
		ts, err := strconv.ParseInt(rows[1][5], 10, 64)
		require.NoError(t, err)
		shift[rows[1][2]] = ts - rt
	}
	require.Contains(t, shift, w[0][1], "the named pid wrote marks")
	var other int64
	for pid, s := range shift {
		if pid != w[0][1] {
			other = s
		}
	}
	require.InDelta(t, 86400e9, float64(shift[w[0][1]]-other), 1e9, "the named process's clock is a day ahead")
}
