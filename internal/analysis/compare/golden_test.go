package compare_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/compare"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/analysis")

// The reports CI jobs consume are pinned by golden files: a change of their
// shape shows in review.
func TestReportGolden(t *testing.T) {
	slow := rocpdtest.Sample(0)
	for i := range slow.Dispatches {
		if slow.Dispatches[i].Kernel == "axpy(float, float*)" {
			d := &slow.Dispatches[i]
			d.End = d.Start + (d.End-d.Start)*6/5
		}
	}
	slow.Dispatches = slow.Dispatches[:len(slow.Dispatches)-1] // one reduce dispatch fewer
	rep := compare.Compare(load(t, rocpdtest.Sample(0)), load(t, slow), compare.Options{Metric: compare.Mean, Threshold: 0.05})
	rep.Base, rep.New = "baseline.db", "results.db"
	for _, c := range []struct{ format, file string }{
		{"markdown", "compare.md"}, {"text", "compare.txt"}, {"junit", "compare.xml"},
	} {
		t.Run(c.format, func(t *testing.T) {
			var b bytes.Buffer
			require.NoError(t, compare.Write(&b, rep, c.format))
			path := filepath.Join("..", "..", "..", "testdata", "analysis", c.file)
			if *update {
				require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run TestReportGolden -update to create it")
			require.Equal(t, string(want), b.String())
		})
	}
}
