package perfetto

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

func TestPerfettoSlicesTracksFlows(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 16)
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, in))
	s := outputtest.DecodePerfetto(t, buf.Bytes())
	want := outputtest.Counts(16)
	got := outputtest.PerfettoCounts(s)
	for d := model.Domain(0); d < model.NumDomains; d++ {
		if d == model.DomCounter {
			continue // counters are counter tracks, not slices
		}
		require.Equal(t, 2*want[d], got[d], d.String())
	}
	var slices uint64
	for _, n := range s.Begins {
		slices += n
	}
	require.Equal(t, slices, s.Ends, "every slice ends")
	require.True(t, s.TrackNames["STREAM [0]"])
	require.True(t, s.ThreadNames["THREAD 1 (101)"])
	require.True(t, s.ThreadNames["app"])
	pmc := 0
	for name := range s.TrackNames {
		if strings.Contains(name, " PMC ") {
			pmc++
		}
	}
	require.Equal(t, 4, pmc, "one PMC track per (agent, counter)")
	// Each dispatch's correlation id links its API call to it.
	linked := 0
	for _, n := range s.Flows {
		if n >= 2 {
			linked++
		}
	}
	require.GreaterOrEqual(t, linked, 2*16)
}

func TestPerfettoGroupByQueue(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100}, 8)
	in.Config.GroupByQueue = true
	var buf bytes.Buffer
	require.NoError(t, Write(&buf, in))
	s := outputtest.DecodePerfetto(t, buf.Bytes())
	require.True(t, s.TrackNames["COMPUTE Agent 1 QUEUE [1] GPU"], "%v", s.TrackNames)
	require.False(t, s.TrackNames["STREAM [0]"])
}
