package summarytables

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

var updateFormatsGolden = flag.Bool("update-formats", false, "rewrite testdata/output/formats golden files")

const formatsGoldenDir = "../../../testdata/output/formats"

func checkFormatsGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join(formatsGoldenDir, name)
	if *updateFormatsGolden {
		require.NoError(t, os.MkdirAll(formatsGoldenDir, 0o755))
		require.NoError(t, os.WriteFile(path, got, 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/output/summarytables -update-formats to create %s", path)
	require.Equal(t, string(want), string(got), "golden %s differs (rerun with -update-formats after checking)", path)
}

func TestSummaryTablesGolden(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 16)
	in.Config.Summary, in.Config.SummaryPerDomain = true, true
	in.Config.SummaryGroups = []string{"KERNEL_DISPATCH|MEMORY_COPY", ".*_API"}
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, in, true))
	checkFormatsGolden(t, "summary.2proc.16iter.D.S.groups.txt.golden", buf.Bytes())

	// Every table row parses as nine columns; every line is indented.
	rows := 0
	for _, line := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		require.True(t, strings.HasPrefix(line, "    "), line)
		if strings.HasPrefix(line, "    |") {
			cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
			require.Len(t, cells, 9, line)
			rows++
		}
	}
	require.Greater(t, rows, 20)
	require.Contains(t, buf.String(), "ROCPROFV3 KERNEL_DISPATCH + MEMORY_COPY SUMMARY:")
	require.Contains(t, buf.String(), "ROCPROFV3 HSA_API + HIP_API + MARKER_API SUMMARY:")
}

func TestSummaryUnitsAndFile(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100}, 8)
	in.Config.Summary, in.Config.SummaryUnits = true, "usec"
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, in, false))
	require.Contains(t, buf.String(), "DURATION (usec)")
	require.True(t, strings.HasPrefix(buf.String(), "\nROCPROFV3 SUMMARY:\n\n| "), "no indent in files")
	p, stdout := Target("/out/run", "my_summary")
	require.Equal(t, "/out/run_my_summary.txt", p)
	require.False(t, stdout)
	_, stdout = Target("/out/run", "stderr")
	require.True(t, stdout)
	in.Config.SummaryUnits = "fortnight"
	require.ErrorContains(t, Write(&buf, in, false), "fortnight")
}

func TestStatsSampleStdDev(t *testing.T) {
	var s model.Stat
	for _, d := range []uint64{2, 4, 4, 4, 5, 5, 7, 9} {
		s.Add(d)
	}
	require.Equal(t, uint64(8), s.Count)
	require.InDelta(t, 2.138089935, s.StdDev(), 1e-9) // n-1
	var one model.Stat
	one.Add(5)
	require.Zero(t, one.StdDev())
}
