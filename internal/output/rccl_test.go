package output

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// RCCL API calls (the domain issue 25 added: one row in the domain table,
// one case per writer) reach every format: CSV and its stats, JSON's
// rccl_api buffer, ROCpd regions, Perfetto and OTF2 slices, Parquet.
func TestRCCLCallsInEveryFormat(t *testing.T) {
	spools := t.TempDir()
	b := spooltest.New(outputtest.Info(300))
	// ncclGroupStart, ncclAllReduce, ncclGroupEnd (ids 13, 1, 14), and the
	// HIP launch RCCL made inside the group end.
	for i, f := range []uint32{13, 1, 14} {
		b.Add(tracing.APICall{Domain: tracing.DomainRCCL, Function: f, TID: 300, CorrelationID: uint64(10 + 2*i),
			Start: uint64(1000 + 100*i), End: uint64(1050 + 100*i), Args: make([]byte, 8)})
	}
	b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 3, TID: 300, CorrelationID: 15, Start: 1210, End: 1220})
	_, err := b.WriteFile(spools)
	require.NoError(t, err)
	out := t.TempDir()
	res, err := Write(model.Config{Dir: out, Formats: []model.Format{model.FormatCSV}, Stats: true, PrefixTemplate: "out", CountEvents: true}, spools)
	require.NoError(t, err)
	csv, err := os.ReadFile(filepath.Join(out, "out_rccl_api_trace.csv"))
	require.NoError(t, err)
	require.Equal(t, `"Domain","Function","Process_Id","Thread_Id","Correlation_Id","Start_Timestamp","End_Timestamp"`+"\n", strings.SplitAfter(string(csv), "\n")[0])
	for _, f := range []string{"ncclGroupStart", "ncclAllReduce", "ncclGroupEnd"} {
		require.Contains(t, string(csv), `"RCCL_API","`+f+`",300,300,`)
	}
	stats, err := os.ReadFile(filepath.Join(out, "out_rccl_api_stats.csv"))
	require.NoError(t, err)
	require.Contains(t, string(stats), `"ncclAllReduce",1,50,`)
	domainStats, err := os.ReadFile(filepath.Join(out, "out_domain_stats.csv"))
	require.NoError(t, err)
	require.Contains(t, string(domainStats), `"RCCL_API",3,150,`)
	require.EqualValues(t, 3, res.Groups[0].Records["RCCL_API"])

	in := &model.Input{Spools: res.Groups[0].Spools}
	prefix := filepath.Join(out, "all")
	writeFormats(t, []model.Format{FormatJSON, FormatPerfetto, FormatROCpd, FormatParquet, FormatOTF2}, prefix, in.Spools)

	var doc struct {
		Tool []struct {
			Buffers map[string][]struct {
				Kind      int    `json:"kind"`
				Operation uint32 `json:"operation"`
			} `json:"buffer_records"`
		} `json:"rocprofiler-sdk-tool"`
	}
	data, err := os.ReadFile(prefix + "_results.json")
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &doc))
	rccl := doc.Tool[0].Buffers["rccl_api"]
	require.Len(t, rccl, 3)
	require.Equal(t, 14, rccl[1].Kind) // rocprofiler-sdk's RCCL_API buffer kind
	require.EqualValues(t, 1, rccl[1].Operation)

	db, err := sql.Open("sqlite3", prefix+"_results.db")
	require.NoError(t, err)
	defer db.Close()
	var n int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM regions WHERE category = 'RCCL_API'`).Scan(&n))
	require.Equal(t, 3, n)

	got := outputtest.DuckDB(t, "SELECT string_agg(function, ',' ORDER BY start_ns) FROM read_parquet("+outputtest.SQLStr(prefix+"_rccl_api.parquet")+")")
	require.Equal(t, "ncclGroupStart,ncclAllReduce,ncclGroupEnd", got[0])

	pf, err := os.ReadFile(prefix + "_results.pftrace")
	require.NoError(t, err)
	require.Contains(t, string(pf), "rccl_api")
	require.Contains(t, string(pf), "ncclAllReduce")
	counts, _ := outputtest.OTF2Counts(t, prefix+"_results.otf2")
	require.EqualValues(t, 3, counts["rccl_api"])
}
