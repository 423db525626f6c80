package parquet

import (
	"context"
	"encoding"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

func TestParquetIndependentReader(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 16)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, Write(prefix, in))
	files := outputtest.ParquetFiles(t, prefix)
	require.Len(t, files, outputtest.RecordedDomains(), "one file per domain the fixture records")
	var paths []string
	for _, p := range files {
		paths = append(paths, p)
	}
	got := outputtest.ParquetCheck(t, paths...)
	st, err := model.CollectStats(in)
	require.NoError(t, err)
	want := outputtest.Counts(16)
	want[model.DomCounter] /= 2 // two instances of each counter summed into one row
	for d, p := range files {
		c := got[filepath.Base(p)]
		require.Equal(t, 2*want[d], c.Rows, d.String())
		require.Equal(t, "ZSTD", c.Codecs, d.String())
		require.True(t, c.Dict, "%s: string columns dictionary-encoded", d)
		if d != model.DomCounter {
			require.Equal(t, st[d].Total.Sum, c.DurationSum, d.String())
		}
	}
	require.Equal(t, prefix+"_kernels.parquet", files[model.DomKernel])
}

func TestParquetDictionaryNamesUnique(t *testing.T) {
	b := spooltest.New(outputtest.Info(100))
	outputtest.Emit(100, 64, func(r encoding.BinaryAppender) { b.Add(r) })
	b.Add(tracing.KernelSymbol{KernelID: 9, CodeObjectID: 2, KernelObject: 0x9000, Name: []byte(outputtest.Kernels[0])})
	for i := 0; i < 10; i++ {
		b.Add(tracing.KernelDispatch{AgentNode: 1, TID: 100, QueueID: 1, DispatchID: uint64(1000 + i), KernelID: 9,
			CorrelationID: uint64(5000 + i), Start: 1, End: 2})
	}
	spool, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, Write(prefix, &model.Input{Spools: []string{spool}}))
	files := outputtest.ParquetFiles(t, prefix)
	c := outputtest.ParquetCheck(t, files[model.DomKernel])[filepath.Base(files[model.DomKernel])]
	require.True(t, c.Dict)
	got := outputtest.DuckDB(t, fmt.Sprintf(`SELECT string_agg(k || '=' || n, '|' ORDER BY k) FROM
		(SELECT kernel_name k, count(*) n FROM read_parquet(%s) GROUP BY 1)`, outputtest.SQLStr(files[model.DomKernel])))
	require.Equal(t, "reduce(double*, double*, unsigned long)=21|vectorAdd_float(float*, float const*, float const*, int)=32|"+
		"void rocprim::detail::scan_kernel<false>(int*, int*, unsigned int)=21", got[0])
}

func TestParquetHiveLayout(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100}, 8)
	in.Config.ParquetHive, in.Config.ParquetRank = true, 3
	dir := t.TempDir()
	require.NoError(t, Write(filepath.Join(dir, "out"), in))
	p := filepath.Join(dir, "domain=kernels", "rank=3", "out.parquet")
	_, err := os.Stat(p)
	require.NoError(t, err)
	got := outputtest.DuckDB(t, fmt.Sprintf(`SELECT string_agg(domain || ':' || rank || ':' || n, ' ' ORDER BY domain) FROM
		(SELECT domain, rank, count(*) n FROM read_parquet(%s, hive_partitioning = true, union_by_name = true) GROUP BY ALL)`,
		outputtest.SQLStr(filepath.Join(dir, "domain=*", "rank=*", "*.parquet"))))
	want := outputtest.Counts(8)
	want[model.DomCounter] /= 2 // two instances of each counter summed into one row
	var parts []string
	for _, d := range []model.Domain{model.DomCounter, model.DomHIP, model.DomHSA, model.DomKernel, model.DomMarker, model.DomAlloc, model.DomCopy, model.DomScratch} {
		parts = append(parts, fmt.Sprintf("%s:3:%d", model.Domains[d].Parquet, want[d]))
	}
	require.Equal(t, strings.Join(parts, " "), got[0])

	// A run's prefix <dir>/<host>/<pid> under a hive root: the partitions
	// start at the root, the host and pid name the file; the host is a
	// partition too.
	in.Config.ParquetHiveRoot = dir
	require.NoError(t, Write(filepath.Join(dir, "node7", "4242"), in))
	require.FileExists(t, filepath.Join(dir, "domain=kernels", "rank=3", "node7-4242.parquet"))
	in.Config.ParquetHost = "node7"
	require.NoError(t, Write(filepath.Join(dir, "node7", "4242"), in))
	require.FileExists(t, filepath.Join(dir, "domain=kernels", "rank=3", "host=node7", "node7-4242.parquet"))
	in.Config.ParquetHost = "a/b=c"
	require.Equal(t, filepath.Join(dir, "domain=kernels", "rank=3", "host=a_b_c", "x.parquet"),
		parquetPath(filepath.Join(dir, "x"), model.DomKernel, &in.Config))
}

// Arrow's own reader still reads the files through the replaced zstd codec
// (decoding and the streaming page reader are Arrow's), and the stored
// Arrow schema gives string columns back as dictionaries.
func TestParquetArrowReadsBack(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100}, 40)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, Write(prefix, in))
	for _, props := range []parquet.ReaderProperties{*parquet.NewReaderProperties(nil), func() parquet.ReaderProperties {
		p := parquet.NewReaderProperties(nil)
		p.BufferedStreamEnabled = true
		return *p
	}()} {
		pf, err := file.OpenParquetFile(prefix+"_kernels.parquet", false, file.WithReadProps(&props))
		require.NoError(t, err)
		r, err := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		require.NoError(t, err)
		tbl, err := r.ReadTable(context.Background())
		require.NoError(t, err)
		require.EqualValues(t, 40, tbl.NumRows())
		require.Equal(t, pqDictType, tbl.Schema().Field(8).Type)
		var dur uint64
		for _, c := range tbl.Column(12).Data().Chunks() {
			for _, v := range c.(*array.Uint64).Uint64Values() {
				dur += v
			}
		}
		st, err := model.CollectStats(in)
		require.NoError(t, err)
		require.Equal(t, st[model.DomKernel].Total.Sum, dur)
		tbl.Release()
		require.NoError(t, pf.Close())
	}
}
