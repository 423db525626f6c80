package compare_test

import (
	"bytes"
	"flag"
	"fmt"
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
	side := func(factor float64) ([]*compare.Run, []string) {
		var rs []*compare.Run
		var names []string
		for i := range 8 {
			p := rocpdtest.Sample(0)
			for j := range p.Dispatches {
				d := &p.Dispatches[j]
				d.End += int64(10 * i) // run-to-run jitter
				if d.Kernel == "axpy(float, float*)" {
					d.End = d.Start + int64(float64(d.End-d.Start)*factor)
				}
			}
			if factor != 1 {
				p.Dispatches = p.Dispatches[:len(p.Dispatches)-1] // one reduce dispatch fewer
			}
			rs = append(rs, load(t, p))
			names = append(names, fmt.Sprintf("run-%d", i+1))
		}
		return rs, names
	}
	base, baseNames := side(1)
	slow, newNames := side(1.2)
	rep := compare.Compare(base, slow, compare.Options{Metric: compare.Mean, Threshold: 0.05, MinDelta: compare.DefaultMinDelta})
	rep.Base, rep.New = baseNames, newNames
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
