package rocpdread_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdread"
	"github.com/rocprof-go/rocprof-go/internal/analysis/rocpdtest"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
	"github.com/rocprof-go/rocprof-go/internal/output/rocpd"
)

// PCSamples reads what the ROCpd writer stored, from the database and
// from a merge of it with another rank's; the API readers leave the
// samples out.
func TestPCSamplesReadAndMerged(t *testing.T) {
	db := filepath.Join(t.TempDir(), "pcs.db")
	require.NoError(t, rocpd.Write(db, outputtest.PCSampleInput(t)))
	other := filepath.Join(t.TempDir(), "other.db")
	require.NoError(t, rocpdtest.Write(other, rocpdtest.Sample(1)))
	merged := filepath.Join(t.TempDir(), "all.db")
	_, err := rocpdread.Merge(context.Background(), merged, []string{other, db})
	require.NoError(t, err)
	for _, path := range []string{db, merged} {
		d, err := rocpdread.Open(path)
		require.NoError(t, err)
		var got []rocpdread.PCSample
		require.NoError(t, d.PCSamples(func(in *rocpdread.Info, s *rocpdread.PCSample) error {
			require.Equal(t, "gfx90a", in.Agents[s.AgentID].Name)
			require.Equal(t, int64(100), in.PID(s.PID))
			got = append(got, *s)
			return nil
		}))
		require.Len(t, got, 9, path)
		s := got[3]
		require.Equal(t, "PC_SAMPLING_HOST_TRAP", s.Category)
		require.Equal(t, int64(100_002_050), s.Timestamp)
		require.Equal(t, int64(1), s.CorrelationID)
		require.Equal(t, uint64(1), s.DispatchID)
		require.Equal(t, uint64(0), s.CodeObjectID)
		require.Equal(t, uint64(0x1234), s.Offset)
		require.Equal(t, ^uint64(0), s.ExecMask)
		require.Equal(t, outputtest.PCSampleHWID, s.HWID)
		require.Equal(t, uint32(5), s.WaveInGroup)
		require.Equal(t, uint32(2), s.Chiplet)
		require.Equal(t, "Unrecognized code object id, physical virtual address of PC:4660", s.Comment)
		require.Equal(t, "s_nop 0x40", got[8].Instruction)
		require.Equal(t, int64(7), got[8].CorrelationID)
		require.Nil(t, got[8].WaveIssued)
		// Not API instants: no region reader returns them.
		require.NoError(t, d.Regions(func(_ *rocpdread.Info, g *rocpdread.Region) error {
			require.NotContains(t, g.Category, "PC_SAMPLING")
			return nil
		}))
		require.NoError(t, d.RegionTimings(func(_ *rocpdread.Info, g *rocpdread.Timing) error {
			require.NotContains(t, g.Category, "PC_SAMPLING")
			return nil
		}))
		require.NoError(t, d.Close())
	}
}
