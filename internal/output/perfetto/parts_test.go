package perfetto

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/output/outputtest"
)

// A trace past the part size is written as parts that each open alone
// (their first packet clears the incremental state; every track and name
// an event uses is described and interned in its own part; every slice
// nests in its part), and together hold what the single file holds: the
// same events on the same tracks with the same names, annotations and
// flows. The spools: the fixture's two processes of every domain (PMC
// pulses, copies' counter tracks, overlap lanes) and a scale spool's four
// threads of HIP calls and kernels.
func TestPerfettoPartsUnionIsTheTrace(t *testing.T) {
	dir := t.TempDir()
	spools := outputtest.WriteSpools(t, dir, []int32{100, 200}, 200)
	scale := filepath.Join(dir, "rpg-4242-4242000000-0.spool")
	hip, kernels := outputtest.ScaleSpool(t, scale, 10_000)
	in := &model.Input{Spools: append(spools, scale)}
	records := domainRecords(t, in)
	require.Greater(t, records, hip+kernels)

	var single bytes.Buffer
	require.NoError(t, Write(&single, in))
	want := outputtest.PerfettoEvents(t, single.Bytes())

	// Under the part size: one file, the same bytes as before parts.
	out := t.TempDir()
	path := filepath.Join(out, "x_results.pftrace")
	parts, err := WriteFile(path, in)
	require.NoError(t, err)
	require.Equal(t, []Part{{Path: path, Records: records}}, parts)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, bytes.Equal(single.Bytes(), got), "one part is the single file")
	require.NoError(t, os.Remove(path))

	const limit = 64 << 10
	in.Config.PerfettoPartBytes = limit
	parts, err = WriteFile(path, in)
	require.NoError(t, err)
	require.Greater(t, len(parts), 8, "%d bytes in parts of %d", single.Len(), limit)
	require.NoFileExists(t, path)
	var union []string
	var partRecords uint64
	for i, p := range parts {
		require.Equal(t, PartPath(path, i+1), p.Path)
		b, err := os.ReadFile(p.Path)
		require.NoError(t, err)
		// A part ends at the first record past the size: by one record's
		// packets at most (the largest here, a kernel slice with its
		// descriptors and names, is well under 4 KiB).
		require.Less(t, len(b), limit+4<<10, p.Path)
		if i < len(parts)-1 {
			require.GreaterOrEqual(t, len(b), limit, p.Path)
		}
		union = append(union, outputtest.PerfettoEvents(t, b)...)
		outputtest.ImportSlices(t, b)
		partRecords += p.Records
	}
	require.Equal(t, records, partRecords, "every record counted in the part that shows it")
	outputtest.SameEvents(t, want, union)
	entries, err := os.ReadDir(out)
	require.NoError(t, err)
	require.Len(t, entries, len(parts), "the parts and nothing else")
}

// With --perfetto-buffer-size the cap is the whole trace's, parts' repeated
// descriptors and names included: the parts keep the records one capped
// file keeps, less those the repetitions took the room of (the discard
// policy keeps the first records), and count the rest as left out.
func TestPerfettoPartsOfACappedTrace(t *testing.T) {
	in := outputtest.NewInput(t, []int32{100, 200}, 300)
	in.Config.PerfettoBufferBytes = 96 << 10
	var single bytes.Buffer
	require.NoError(t, Write(&single, in))
	capped := in.PerfettoCapped
	require.NotEmpty(t, capped)
	want := outputtest.PerfettoEvents(t, single.Bytes())

	in.PerfettoCapped = nil
	in.Config.PerfettoPartBytes = 16 << 10
	path := filepath.Join(t.TempDir(), "x_results.pftrace")
	parts, err := WriteFile(path, in)
	require.NoError(t, err)
	require.Greater(t, len(parts), 3)
	var union []string
	var kept, keptSingle, left, leftSingle uint64
	for _, p := range parts {
		b, err := os.ReadFile(p.Path)
		require.NoError(t, err)
		union = append(union, outputtest.PerfettoEvents(t, b)...)
		kept += p.Records
	}
	for pid, n := range capped {
		leftSingle += n
		left += in.PerfettoCapped[pid]
	}
	total := domainRecords(t, in)
	keptSingle = total - leftSingle
	require.Equal(t, total, kept+left, "every record kept in a part or counted as left out")
	require.Greater(t, kept, keptSingle*3/4) // 6 parts of 16 KiB: each repeats its tracks and names
	require.LessOrEqual(t, kept, keptSingle)
	have := map[string]int{}
	for _, e := range want {
		have[e]++
	}
	for _, e := range union {
		require.Positive(t, have[e], "an event of the parts the single capped trace does not hold: %s", e)
		have[e]--
	}
}

// domainRecords is the records of rocprofv3's domains the spools hold, as
// the run counts them (model.Catalogue.Counts).
func domainRecords(t *testing.T, in *model.Input) uint64 {
	var n uint64
	require.NoError(t, in.OpenEach(func(p *model.Catalogue, _ *model.SpoolView) error {
		for _, c := range p.Counts {
			n += c
		}
		return nil
	}))
	return n
}
