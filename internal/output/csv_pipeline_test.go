package output

import (
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	csvout "github.com/rocprof-go/rocprof-go/internal/output/csv"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// The pipeline's output does not depend on how many goroutines format
// batches: spools of several batches with counters, renames, rocprof v1
// files and unknown kernels and agents give the same bytes with one
// formatting goroutine and with four.
func TestCSVPipelineSameBytes(t *testing.T) {
	spools := t.TempDir()
	csvBenchSpool(t, spools, 3*csvout.BatchRecords+77)
	sp := spooltest.New(tracing.ProcessInfo{PID: 2, StartBoottimeNs: 2, Hostname: "h"})
	sp.Add(outputtest.Agent(1, 1, 0, tracing.AgentGPU, "gpu"))
	sp.Add(tracing.KernelSymbol{KernelID: 1, GroupSegmentSize: 100, VGPRCount: 8, Name: []byte("_Z3fooi")})
	for i := uint64(1); i < 2*csvout.BatchRecords; i++ {
		sp.Add(tracing.KernelDispatch{AgentNode: uint32(1 + i%3), TID: 7, QueueID: 1, DispatchID: i,
			KernelID: 1 + i%3, CorrelationID: i * 3, Start: i * 100, End: i*100 + 50,
			GroupSegmentSize: uint32(i % 7), Grid: [3]uint32{64, 1, 1}, Workgroup: [3]uint32{64, 1, 1}})
		if i%10 == 0 {
			sp.Add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange,
				TID: 7, CorrelationID: i*3 - 1, RangeID: i*3 + 20, Start: i, End: i + 5, Message: []byte("range")})
		}
		if i%5 == 0 {
			sp.Add(tracing.CounterSample{DispatchID: i, CounterID: 1, Name: []byte("SQ_WAVES"), Value: float64(i)})
			sp.Add(tracing.CounterSample{DispatchID: i + 1<<20, CounterID: 2, Name: []byte("GRBM"), Value: 1.5})
		}
		if i%97 == 0 {
			sp.Add(tracing.ScratchMemory{Operation: tracing.ScratchAlloc, AgentNode: 1, QueueID: 1, TID: 7,
				Start: i, End: i + 9, Size: 77})
			sp.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: uint32(i % 500), TID: 7,
				CorrelationID: i, Start: i, End: i + 3})
		}
	}
	_, err := sp.WriteFile(spools)
	require.NoError(t, err)

	write := func(procs int, cfg model.Config) map[string]string {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		cfg.Dir = t.TempDir()
		_, err := Write(cfg, spools)
		require.NoError(t, err)
		return outputtest.ReadTree(t, cfg.Dir)
	}
	for _, cfg := range []model.Config{
		{Formats: []model.Format{model.FormatCSV}, Stats: true, PrefixTemplate: "%pid%"},
		{Formats: []model.Format{model.FormatCSV}, Stats: true, KernelRename: true, TruncateKernels: true, PrefixTemplate: "all"},
		{Formats: []model.Format{model.FormatCSV}, Stats: true, PrefixTemplate: "res.csv"},
	} {
		one, four := write(1, cfg), write(4, cfg)
		require.NotEmpty(t, one)
		require.Equal(t, len(one), len(four))
		for name, data := range one {
			require.Equal(t, data, four[name], filepath.Base(name))
		}
	}
}
