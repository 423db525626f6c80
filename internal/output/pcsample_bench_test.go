package output

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// BenchmarkPCSampleFormats writes ROCPROF_GO_PCS_SAMPLES (default
// 1,000,000) host-trap samples in each format apart and reports the time
// and output size of each (the instruction texts from a stand-in
// disassembler: the formats' own cost).
func BenchmarkPCSampleFormats(b *testing.B) {
	n := 1_000_000
	if v, err := strconv.Atoi(os.Getenv("ROCPROF_GO_PCS_SAMPLES")); err == nil {
		n = v
	}
	spools := b.TempDir()
	outputtest.PCSampleSpoolN(b, spools, n)
	for _, f := range []model.Format{model.FormatCSV, FormatJSON, FormatROCpd, FormatParquet, FormatPerfetto} {
		b.Run(string(f), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				dir := b.TempDir()
				cfg := model.Config{Dir: dir, PrefixTemplate: "out", Formats: []model.Format{f},
					PCInstructions: func(*model.PCSamples) model.PCInstructions { return outputtest.FakePCInstructions{} }}
				t0 := time.Now()
				_, err := Write(cfg, spools)
				require.NoError(b, err)
				el := time.Since(t0)
				var size int64
				require.NoError(b, filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
					if err == nil && !fi.IsDir() {
						size += fi.Size()
					}
					return err
				}))
				b.ReportMetric(float64(el.Nanoseconds())/float64(n), "ns/sample")
				b.ReportMetric(float64(size)/float64(n), "bytes/sample")
			}
		})
	}
}
