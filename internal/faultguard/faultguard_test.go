package faultguard_test

import (
	"errors"
	"os"
	"runtime/debug"
	"syscall"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	_ "github.com/rocprof-go/rocprof-go/internal/faultguard"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

var testProcess = tracing.ProcessInfo{
	PID: 4242, PPID: 1, PGID: 4242, SID: 4242, PSize: 2,
	StartBoottimeNs: 1_000_000, StartRealtimeNs: 1_700_000_000_000_000_000,
	Hostname: "node01", Argv: []string{"./app", "--n", "3"},
	Cwd: "/srv/job", Exe: "/srv/job/app",
}

// A spool cut short while it is read (its owner, or whoever else could
// write it, truncated the file) does not crash the reader: the part past
// the new end reads as no records, Close says the spool is torn and where,
// and TornSpools lists it for the command to fail. Before, the first
// access past the end was a SIGBUS, a fatal error of the Go runtime.
func TestReaderSurvivesASpoolCutShort(t *testing.T) {
	dir := t.TempDir()
	b := spooltest.New(testProcess)
	const total = 20000
	for i := range total {
		b.Add(tracing.KernelDispatch{AgentNode: 1, TID: 11, QueueID: 1, DispatchID: uint64(i + 1), KernelID: 5,
			CorrelationID: uint64(i + 1), Start: uint64(1000 + 10*i), End: uint64(1005 + 10*i)})
	}
	path, err := b.WriteFile(dir)
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	require.Greater(t, st.Size(), int64(8*tracing.ChunkSize), "the spool spans several chunks")

	r, err := tracing.Open(path)
	require.NoError(t, err)
	n := 0
	for r.Next() {
		n++
		if n == 10 {
			require.NoError(t, os.Truncate(path, 2*tracing.ChunkSize))
		}
	}
	require.Less(t, n, total)
	require.Greater(t, n, 10)
	err = r.Close()
	var torn *tracing.TornSpoolError
	require.ErrorAs(t, err, &torn)
	require.Equal(t, path, torn.Path)
	require.Equal(t, int64(2*tracing.ChunkSize), torn.At)
	require.Equal(t, st.Size(), torn.Size)
	require.Contains(t, err.Error(), "was cut short (truncated by its owner or another process) while it was read")
	require.Contains(t, tracing.TornSpools(), torn)

	// An intact spool closes without error.
	other := t.TempDir()
	p2, err := spooltest.New(testProcess).WriteFile(other)
	require.NoError(t, err)
	r, err = tracing.Open(p2)
	require.NoError(t, err)
	for r.Next() {
	}
	require.NoError(t, r.Close())
}

var faultSink byte

// The reader's fault guard handles faults in the spools it maps only:
// any other SIGBUS still reaches Go's handler (here turned into a panic
// by SetPanicOnFault, as Go does for a mapping of its own).
func TestFaultGuardPassesOtherFaultsToGo(t *testing.T) {
	dir := t.TempDir()
	p, err := spooltest.New(testProcess).WriteFile(dir)
	require.NoError(t, err)
	r, err := tracing.Open(p) // installs the guard
	require.NoError(t, err)
	defer r.Close()

	f, err := os.CreateTemp(dir, "other")
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Truncate(1<<16))
	data, err := syscall.Mmap(int(f.Fd()), 0, 1<<16, syscall.PROT_READ, syscall.MAP_SHARED)
	require.NoError(t, err)
	defer syscall.Munmap(data)
	require.NoError(t, f.Truncate(0))
	var got any
	func() {
		defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
		defer func() { got = recover() }()
		faultSink = data[4096]
	}()
	re, ok := got.(interface{ Addr() uintptr })
	require.True(t, ok, "Go's fault panic, not %v", got)
	require.Equal(t, uintptr(unsafe.Pointer(&data[4096])), re.Addr())
}

// A spool cut short while read is returned by TornSince to the function
// that read it (only for the spools it names, only when cut after its
// mark), with the chunks lost from the cut on; once returned it is no
// longer listed as unreported.
func TestTornSinceReturnsTheSpoolsCutShort(t *testing.T) {
	b := spooltest.New(testProcess)
	for i := range 20000 {
		b.Add(tracing.KernelDispatch{AgentNode: 1, TID: 11, QueueID: 1, DispatchID: uint64(i + 1), KernelID: 5,
			CorrelationID: uint64(i + 1), Start: uint64(1000 + 10*i), End: uint64(1005 + 10*i)})
	}
	path, err := b.WriteFile(t.TempDir())
	require.NoError(t, err)
	st, err := os.Stat(path)
	require.NoError(t, err)
	chunks := uint64(st.Size() / tracing.ChunkSize)

	mark := tracing.TornMark()
	require.NoError(t, tracing.TornSince(mark, []string{path}))
	r, err := tracing.Open(path)
	require.NoError(t, err)
	for n := 0; r.Next(); n++ {
		if n == 10 {
			require.NoError(t, os.Truncate(path, 2*tracing.ChunkSize))
		}
	}
	var closed *tracing.TornSpoolError
	require.ErrorAs(t, r.Close(), &closed)
	require.Equal(t, chunks-2, closed.LostChunks, "the chunks from the cut to the spool's end")
	require.Contains(t, closed.Error(), "chunks, up to 64 KiB of records each) are lost")
	require.Contains(t, tracing.UnreportedTornSpools(), closed)

	require.NoError(t, tracing.TornSince(mark, []string{path + ".other"}), "another caller's spools")
	require.NoError(t, tracing.TornSince(tracing.TornMark(), []string{path}), "cut before the mark")
	err = tracing.TornSince(mark, []string{path})
	var torn *tracing.TornSpoolError
	require.ErrorAs(t, err, &torn)
	require.Same(t, closed, torn)
	require.True(t, tracing.OnlyTorn(err))
	require.True(t, tracing.OnlyTorn(errors.Join(err, torn)))
	require.False(t, tracing.OnlyTorn(errors.Join(err, os.ErrNotExist)))
	require.False(t, tracing.OnlyTorn(nil))
	require.NotContains(t, tracing.UnreportedTornSpools(), closed)
}
