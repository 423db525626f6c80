package outputtest

import (
	"encoding"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// Scale spools: the records a long multi-threaded HIP app leaves, for the
// tests and benchmarks of the writers' memory (which must not grow with the
// record count). Four app threads make HIP calls, each in its own chunks,
// with correlation ids taken in per-thread blocks of 64 as the preload
// library hands them out; every other call launches a kernel, whose
// dispatch record a fifth thread (the queue's completion thread) writes
// after the round. The threads' calls overlap in time and the kernels take
// varied times, so both kinds are out of spool order and the correlation
// ids out of start order: the order layer's costliest case.

const (
	scaleThreads   = 4
	scaleCalls     = 1280 // per thread and round: one chunk of v1 API records
	scaleIDBlock   = 64
	scaleCompleter = 1010
)

// ScaleRecordsPerRound is how many records one round writes.
const ScaleRecordsPerRound = scaleThreads * (scaleCalls + scaleCalls/2)

// ScaleRounds is the rounds that write at least n records.
func ScaleRounds(n int) int { return (n + ScaleRecordsPerRound - 1) / ScaleRecordsPerRound }

// ScaleSpool writes a scale spool of ScaleRounds(n) rounds to path, streamed
// (its size is not held in memory), and returns the records it holds: HIP
// calls and kernel dispatches.
func ScaleSpool(t testing.TB, path string, n int) (hip, kernels uint64) {
	t.Helper()
	return ScaleSpoolOf(t, path, n, ScaleKinds{Calls: true, Kernels: true})
}

// ScaleKinds selects what a scale spool holds.
type ScaleKinds struct {
	Calls, Kernels bool // the HIP calls, the kernels' dispatch records
	// Jitter adds up to 255 ns of noise to every time and duration, as
	// real clocks have: ScaleSpool's regular steps compress to almost
	// nothing in Parquet's delta encoding, which no real trace does.
	Jitter bool
}

// ScaleSpoolOf is ScaleSpool with the records of one kind only, or
// jittered times: for the outputs' bytes per record of each kind.
func ScaleSpoolOf(t testing.TB, path string, n int, kinds ScaleKinds) (hip, kernels uint64) {
	t.Helper()
	rng := uint64(0x9e3779b97f4a7c15)
	noise := func() uint64 {
		if !kinds.Jitter {
			return 0
		}
		rng ^= rng << 13
		rng ^= rng >> 7
		rng ^= rng << 17
		return rng & 0xff
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	require.NoError(t, err)
	defer f.Close()
	w := tracing.NewWriter(f, Info(4242), scaleCompleter)
	add := func(r encoding.BinaryAppender) {
		require.NoError(t, w.Add(r))
	}
	add(AgentRecord(0, 0, 0, tracing.AgentCPU, "Virtual CPU"))
	add(AgentRecord(1, 1, 0, tracing.AgentGPU, "gfx90a"))
	for i, name := range []string{"hipGetLastError", "hipLaunchKernel"} {
		add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: uint64(i), Value: []byte(name)})
	}
	add(tracing.CodeObject{CodeObjectID: 1, Operation: tracing.CodeObjectLoad, AgentNode: 1,
		LoadBase: 0x7f0000000000, LoadSize: 4096, URI: []byte("file:///app#offset=0&size=4096")})
	for i, k := range Kernels {
		add(tracing.KernelSymbol{KernelID: uint64(i + 1), CodeObjectID: 1, KernelObject: 0x1000 * uint64(i+1),
			KernargSize: 32, GroupSegmentSize: 512, VGPRCount: 8, SGPRCount: 16, Name: []byte(k)})
	}
	var nextBlock uint64 = 1
	var ids [scaleThreads]struct{ next, end uint64 }
	type pending struct {
		corr, start, end uint64
		tid              uint32
	}
	done := make([]pending, 0, scaleThreads*scaleCalls/2)
	var dispatch uint64
	const roundNs = scaleCalls * 1000
	for round := range ScaleRounds(n) {
		base := 1_000_000 + uint64(round)*roundNs
		done = done[:0]
		for th := range scaleThreads {
			tid := uint32(1001 + th)
			require.NoError(t, w.NewChunk(tid))
			for j := range scaleCalls {
				id := &ids[th]
				if id.next == id.end {
					id.next, id.end = nextBlock, nextBlock+scaleIDBlock
					nextBlock += scaleIDBlock
				}
				corr := id.next
				id.next++
				start := base + uint64(j)*1000 + uint64(th)*250 + noise()
				end := start + 400 + uint64(j%3)*50 + noise()
				fn := uint32(j % 2)
				if kinds.Calls {
					add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: fn, TID: tid, CorrelationID: corr, Start: start, End: end})
					hip++
				}
				if fn == 1 {
					ks := end + 2000 + noise()
					done = append(done, pending{corr, ks, ks + 300 + uint64((j*7919+th*31)%5)*200 + noise(), tid})
				}
			}
		}
		if !kinds.Kernels {
			continue
		}
		require.NoError(t, w.NewChunk(scaleCompleter))
		for i, d := range done {
			dispatch++
			add(tracing.KernelDispatch{AgentNode: 1, TID: d.tid, QueueID: 1 + uint64(d.tid%2), DispatchID: dispatch,
				KernelID: uint64(1 + i%len(Kernels)), CorrelationID: d.corr, Start: d.start, End: d.end,
				Grid: [3]uint32{1024, 1, 1}, Workgroup: [3]uint32{256, 1, 1}, GroupSegmentSize: 512,
				VGPRCount: 8, SGPRCount: 16, PacketIndex: uint32(dispatch)})
			kernels++
		}
	}
	require.NoError(t, w.Sync())
	return hip, kernels
}
