package otf2

import (
	"fmt"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

func TestOTF2ReadableByOTF2Print(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 16)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, Write(prefix+"_results", in))
	counts, leaves := outputtest.OTF2Counts(t, prefix+"_results.otf2")
	want := outputtest.Counts(16)
	var total uint64
	for d := model.Domain(0); d < model.NumDomains; d++ {
		n := 2 * want[d]
		switch d {
		case model.DomCounter:
			n = 0 // counters are not regions
		case model.DomMarker:
			n -= 2 * 16 / 2 // marks are instants, not encoded
		}
		require.Equal(t, n, counts[model.Domains[d].Category], d.String())
		total += n
	}
	require.Equal(t, total, leaves)
}

// Many host threads cost each a location with its own event writer and
// local definitions, whose buffers are one chunk each: the archive asks for
// OTF2's smallest chunks (it took minutes for 130,000 threads with the
// library's 1 MiB and 4 MiB defaults), and a location with more events
// than a chunk holds (one busy thread) still reads back whole.
func TestOTF2ManyLocationsSmallChunks(t *testing.T) {
	const threads, busy = 2000, 40000
	b := spooltest.New(outputtest.Info(300))
	id := uint64(0)
	call := func(tid uint32, start uint64) {
		id++
		b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 3, TID: tid, CorrelationID: id, Start: start, End: start + 5})
	}
	for i := range threads {
		call(uint32(1000+i), uint64(1000+10*i))
	}
	for i := range busy { // 80,000 events of ~10 bytes: several 256 KiB chunks
		call(7, uint64(1000+10*i))
	}
	p, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	prefix := outputtest.TempPrefix(t)
	require.NoError(t, Write(prefix+"_results", &model.Input{Spools: []string{p}}))
	anchor := prefix + "_results.otf2"
	info, err := exec.Command("otf2-print", "-I", anchor).CombinedOutput()
	require.NoError(t, err, "%s", info)
	require.Regexp(t, `Chunk size events\s+262144\n`, string(info))
	require.Regexp(t, `Chunk size definitions\s+262144\n`, string(info))
	require.Regexp(t, fmt.Sprintf(`Number of locations\s+%d\n`, threads+1), string(info))
	counts, leaves := outputtest.OTF2Counts(t, anchor)
	require.EqualValues(t, threads+busy, counts[model.Domains[model.DomHIP].Category])
	require.EqualValues(t, threads+busy, leaves)
}
