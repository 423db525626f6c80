package convert_test

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/analysis/convert"
	"github.com/rocprof-go/rocprof-go/internal/output"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// A kept spool that lost records as it was recorded is converted (every
// record it holds) and the conversion says what was lost: the records its
// recorder dropped (with why its spool could not grow) and the chunks the
// app wrote that read back empty (a file system that did not keep them).
// Before, convert was silent about both.
func TestKeptSpoolLossesAreReported(t *testing.T) {
	b := spooltest.New(tracing.ProcessInfo{PID: 77, PPID: 1, PGID: 77, SID: 77, Hostname: "node01",
		Argv: []string{"./app"}, Dropped: 5})
	for i := uint64(1); i <= 3; i++ {
		b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: 77, CorrelationID: i, Start: 100 * i, End: 100*i + 10})
		b.NewChunk()
	}
	b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: 77, CorrelationID: 4, Start: 400, End: 410})
	data := b.Bytes()
	// Chunk 2 reads back as zeros, as the recorder's write into a file
	// system that did not keep it; the recorder said why the spool could
	// not grow.
	clear(data[2*tracing.ChunkSize : 3*tracing.ChunkSize])
	binary.LittleEndian.PutUint32(data[104:], 28)                                                       // ENOSPC
	binary.LittleEndian.PutUint32(data[108:], tracing.HeaderCountsAbandoned|tracing.HeaderCountsHeaded) // as the recorder writes it
	dir := t.TempDir()
	path := filepath.Join(dir, "rpg-77-1-0.spool")
	require.NoError(t, os.WriteFile(path, data, 0o600))

	out := t.TempDir()
	res, err := convert.Run(nil, convert.Options{Formats: []output.Format{output.FormatCSV}, Dir: out, Prefix: "run", Spools: []string{path}})
	require.NoError(t, err)
	require.Len(t, res.CSV, 1)
	require.Equal(t, uint64(3), res.CSV[0].Records, "the three records kept")
	var lost *convert.LostRecordsError
	require.ErrorAs(t, res.Lost, &lost)
	require.Equal(t, []convert.SpoolLoss{{Path: path, PID: 77, Dropped: 5, LostChunks: 1, StoreError: "no space left on device (errno 28)"}}, lost.Spools)
	require.Contains(t, res.Lost.Error(), "pid 77 ("+path+"): 5 dropped by the recorder (its spool could not grow: no space left on device (errno 28)), 1 spool chunks written by the app read back empty")

	// A spool that lost nothing converts without a word.
	c := spooltest.New(tracing.ProcessInfo{PID: 78, PPID: 1, PGID: 78, SID: 78, Hostname: "node01", Argv: []string{"./app"}})
	c.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: 78, CorrelationID: 1, Start: 100, End: 110})
	whole, err := c.WriteFile(t.TempDir())
	require.NoError(t, err)
	res, err = convert.Run(nil, convert.Options{Formats: []output.Format{output.FormatCSV}, Dir: t.TempDir(), Prefix: "run", Spools: []string{whole}})
	require.NoError(t, err)
	require.NoError(t, res.Lost)
}
