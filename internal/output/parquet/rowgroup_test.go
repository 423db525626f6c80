package parquet

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// A row group spans batches (issue 43: a row group per batch made the
// footer's metadata grow half a byte per record), and a string column whose
// names first appear in later batches stays dictionary-encoded: its
// dictionary is the row group's, written once the row group ends.
func TestParquetRowGroupSpansBatches(t *testing.T) {
	const rows = 3*pqBatchRows + 100
	b := spooltest.New(outputtest.Info(100))
	for i := range 3 {
		b.Add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: uint64(i), Value: []byte(fmt.Sprintf("hipFunction%d", i))})
	}
	for i := range rows {
		// function i/pqBatchRows: a new name in each batch
		b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: uint32(min(i/pqBatchRows, 2)), TID: 100,
			CorrelationID: uint64(i + 1), Start: uint64(1000 + 10*i), End: uint64(1005 + 10*i)})
	}
	spool, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, Write(prefix, &model.Input{Spools: []string{spool}}))

	path := prefix + "_hip_api.parquet"
	pf, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer pf.Close()
	require.Equal(t, 1, pf.NumRowGroups())
	require.EqualValues(t, rows, pf.NumRows())
	fn := pf.MetaData().Schema.ColumnIndexByName("function")
	cc, err := pf.MetaData().RowGroup(0).ColumnChunk(fn)
	require.NoError(t, err)
	require.True(t, cc.HasDictionaryPage())
	data := 0
	for _, s := range cc.EncodingStats() {
		if strings.HasPrefix(s.PageType.String(), "DATA_PAGE") {
			data++
			require.Equal(t, parquet.Encodings.RLEDict, s.Encoding, "function's data pages: dictionary indices, not plain text")
		}
	}
	require.NotZero(t, data)
	got := outputtest.DuckDB(t, fmt.Sprintf(`SELECT string_agg(function || ':' || n, ' ' ORDER BY function) FROM
		(SELECT function, count(*) n, min(correlation_id) c FROM read_parquet(%s) GROUP BY 1)`, outputtest.SQLStr(path)),
		fmt.Sprintf(`SELECT count(*) FROM read_parquet(%s, file_row_number = true) WHERE correlation_id != file_row_number + 1`,
			outputtest.SQLStr(path)))
	require.Equal(t, fmt.Sprintf("hipFunction0:%d hipFunction1:%d hipFunction2:%d", pqBatchRows, pqBatchRows, pqBatchRows+100), got[0])
	require.Equal(t, "0", got[1], "rows in spool order")
}

// A row group ends early once its dictionaries hold pqGroupDictBytes of
// text (markers' messages are free text), so that the writer's memory does
// not follow the messages' length.
func TestParquetRowGroupEndsOnDictionaryBytes(t *testing.T) {
	const rows = 2*pqBatchRows + 10
	msg := strings.Repeat("m", pqGroupDictBytes/pqBatchRows+8)
	b := spooltest.New(outputtest.Info(100))
	for i := range rows {
		b.Add(tracing.Marker{Domain: tracing.DomainMarkerCore, Function: tracing.MarkerMark, TID: 100,
			CorrelationID: uint64(i + 1), Start: uint64(1000 + 10*i), End: uint64(1000 + 10*i),
			Message: []byte(fmt.Sprintf("%s%08d", msg, i))})
	}
	spool, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, Write(prefix, &model.Input{Spools: []string{spool}}))
	path := prefix + "_marker_api.parquet"
	pf, err := file.OpenParquetFile(path, false)
	require.NoError(t, err)
	defer pf.Close()
	require.Equal(t, 3, pf.NumRowGroups(), "a row group per batch once a batch's messages pass the limit")
	require.EqualValues(t, pqBatchRows, pf.MetaData().RowGroup(0).NumRows())
	got := outputtest.DuckDB(t, fmt.Sprintf(`SELECT count(DISTINCT message) || ' ' || count(*) FROM read_parquet(%s)`, outputtest.SQLStr(path)))
	require.Equal(t, fmt.Sprintf("%d %d", rows, rows), got[0])
}
