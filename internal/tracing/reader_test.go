package tracing_test

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

var testProcess = tracing.ProcessInfo{
	PID: 4242, PPID: 1, PGID: 4242, SID: 4242, PSize: 2,
	StartBoottimeNs: 1_000_000, StartRealtimeNs: 1_700_000_000_000_000_000,
	Hostname: "node01", Argv: []string{"./app", "--n", "3"},
	Environ: []string{"A=1", "OMPI_COMM_WORLD_RANK=3"}, Cwd: "/srv/job", Exe: "/srv/job/app",
}

// oneOfEach holds one record of every kind, with every field set.
var oneOfEach = []encoding.BinaryAppender{
	tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: 7, Value: []byte("hipMalloc")},
	tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 7, TID: 11, CorrelationID: 1,
		Start: 100, End: 200, Args: []byte("abc")},
	tracing.APICall{Domain: tracing.DomainHSACore, Function: 2, TID: 11, CorrelationID: 2,
		Start: 110, End: 120},
	tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange,
		TID: 12, CorrelationID: 3, Start: 90, End: 300, RangeID: 0, Message: []byte("region")},
	tracing.KernelDispatch{AgentNode: 1, TID: 11, QueueID: 1, StreamID: 2, DispatchID: 1,
		KernelID: 5, CorrelationID: 1, Start: 150, End: 180, Grid: [3]uint32{1024, 2, 3},
		Workgroup: [3]uint32{64, 1, 1}, GroupSegmentSize: 100, PrivateSegmentSize: 16,
		VGPRCount: 8, AGPRCount: 4, SGPRCount: 16},
	tracing.MemoryCopy{Direction: tracing.CopyHostToDevice, SrcAgentNode: 0, DstAgentNode: 1,
		TID: 11, Bytes: 4096, StreamID: 2, CorrelationID: 4, Start: 130, End: 140,
		SrcAddress: 0x1000, DstAddress: 0x2000},
	tracing.MemoryAllocation{Operation: tracing.AllocAllocate, AgentNode: 1, TID: 11,
		Address: 0x7ffb26354000, Size: 1 << 20, CorrelationID: 5, Start: 10, End: 20},
	tracing.ScratchMemory{Operation: tracing.ScratchAlloc, AgentNode: 1, TID: 11, Flags: 1,
		QueueID: 1, Size: 65536, CorrelationID: 6, Start: 30, End: 40},
	tracing.KernelSymbol{KernelID: 5, CodeObjectID: 1, KernelObject: 0xabc, KernargSize: 24,
		GroupSegmentSize: 100, PrivateSegmentSize: 16, VGPRCount: 8, AGPRCount: 4,
		SGPRCount: 16, EntryOffset: 0x1180, Name: []byte("_Z3addPfS_i.kd")},
	tracing.CodeObject{CodeObjectID: 1, Operation: tracing.CodeObjectLoad, AgentNode: 1,
		StorageType: 2, LoadBase: 0x10000, LoadSize: 4096, LoadDelta: 0x10000, Timestamp: 5,
		URI: []byte("file:///app#offset=1")},
	tracing.AgentInfo{Values: [tracing.AgentNumericFields]uint64{1, 1, 2, 0, 4, 0, 0, 10},
		Name: "gfx908", VendorName: "AMD", ProductName: "Virtual GPU", ModelName: "vgpu"},
	tracing.CounterSample{DispatchID: 1, CounterID: 9, Value: 0.5, AgentNode: 1,
		Dims: []tracing.CounterDim{{1, 0}, {2, 3}}, Name: []byte("SQ_WAVES")},
	tracing.PCSampleBatch{AgentNode: 1, Method: tracing.PCSamplingHostTrap, Lost: 7, Samples: tracing.PCSample{PC: 0x7f0000001010, ExecMask: ^uint64(0),
		Workgroup: [3]uint32{3, 1, 0}, ChipletWave: 2<<8 | 5, HWID: 0x1234, Timestamp: 155,
		CorrelationID: tracing.TrapID(0x7f0000000408, 1029, 1024)}.Encode(tracing.PCSample{PC: 2}.Encode(nil))},
	tracing.PCSampleDispatch{DispatchID: 1, TrapID: tracing.TrapID(0x7f0000000408, 1029, 1024), AgentNode: 1},
	tracing.PCSampleBatch{AgentNode: 1, Method: tracing.PCSamplingStochastic, Samples: tracing.PCSample{PC: 0x7f0000001020,
		ExecMask: ^uint64(0), ChipletWave: 1, HWID: 0x2211, Snapshot: [3]uint32{0x4000_0003, 9, 0}, Timestamp: 160,
		CorrelationID: tracing.TrapID(0x7f0000000408, 1029, 1024)}.Encode(nil)},
}

func decodeCurrent(r *tracing.Reader) any {
	switch r.Kind() {
	case tracing.KindString:
		return r.String()
	case tracing.KindHIPAPI, tracing.KindHSAAPI:
		return r.APICall()
	case tracing.KindMarker:
		return r.Marker()
	case tracing.KindKernelDispatch:
		return r.KernelDispatch()
	case tracing.KindMemoryCopy:
		return r.MemoryCopy()
	case tracing.KindMemoryAllocation:
		return r.MemoryAllocation()
	case tracing.KindScratchMemory:
		return r.ScratchMemory()
	case tracing.KindKernelSymbol:
		return r.KernelSymbol()
	case tracing.KindCodeObject:
		return r.CodeObject()
	case tracing.KindAgentInfo:
		return r.AgentInfo()
	case tracing.KindCounterSample:
		return r.CounterSample()
	case tracing.KindPCSample:
		return r.PCSampleBatch()
	case tracing.KindPCSampleDispatch:
		return r.PCSampleDispatch()
	}
	return nil
}

func TestRoundTripEveryKind(t *testing.T) {
	b := spooltest.New(testProcess)
	for _, rec := range oneOfEach {
		b.Add(rec)
	}
	r, err := tracing.NewReader(b.Bytes())
	require.NoError(t, err)
	var got []any
	for r.Next() {
		got = append(got, decodeCurrent(r))
	}
	require.Len(t, got, len(oneOfEach))
	for i, want := range oneOfEach {
		w := any(want)
		if a, ok := w.(tracing.APICall); ok && a.Args == nil {
			a.Args = []byte{}
			w = a
		}
		require.Equal(t, w, got[i], "record %d", i)
	}
	p := r.Process()
	require.Equal(t, testProcess.Argv, p.Argv)
	require.Equal(t, testProcess.Environ, p.Environ)
	require.Equal(t, "node01", p.Hostname)
	rank, ok := p.Getenv("OMPI_COMM_WORLD_RANK")
	require.True(t, ok)
	require.Equal(t, "3", rank)
	require.Equal(t, uint64(len(oneOfEach)), r.Stats().Records)
}

func TestPCSampleFields(t *testing.T) {
	corr := tracing.TrapID(0x7f0000000408, 1029, 1024)
	require.Equal(t, uint64(0x81)<<32|5, corr)
	b := tracing.PCSampleBatch{Samples: tracing.PCSample{PC: 0x1010, ChipletWave: 2<<8 | 5, CorrelationID: corr | 1<<60}.Encode(nil)}
	require.Equal(t, 1, b.Count())
	s := b.Sample(0)
	require.Equal(t, uint32(5), s.WaveInGroup())
	require.Equal(t, uint32(2), s.Chiplet())
	require.Equal(t, corr, tracing.TrapIDKey(s.CorrelationID))
	// A stochastic sample's snapshot words sit where host trap's are reserved.
	raw := tracing.PCSample{Snapshot: [3]uint32{1, 2, 3}, Timestamp: 9}.Encode(nil)
	require.Equal(t, []byte{1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 9}, raw[36:49])
}

func TestReaderRejects(t *testing.T) {
	api := tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, CorrelationID: 1}
	cases := []struct {
		name                          string
		build                         func(b *spooltest.Builder)
		records, torn, invalid, skips uint64
	}{
		{"torn record is skipped by its size", func(b *spooltest.Builder) {
			b.Add(api)
			b.AddTorn(api)
			b.Add(api)
		}, 2, 1, 0, 0},
		{"unknown kind is skipped", func(b *spooltest.Builder) {
			rec, _ := api.AppendBinary(nil)
			rec[4] = 200
			b.AddRaw(rec)
			b.Add(api)
		}, 1, 0, 0, 1},
		{"newer record version is skipped", func(b *spooltest.Builder) {
			rec, _ := api.AppendBinary(nil)
			rec[6] = 4 // API records have versions 1 to 3
			b.AddRaw(rec)
			b.Add(api)
		}, 1, 0, 0, 1},
		{"size not a multiple of 8 abandons the chunk", func(b *spooltest.Builder) {
			b.Add(api)
			rec, _ := api.AppendBinary(nil)
			rec[0] = 13
			b.AddRaw(rec)
			b.Add(api)
			b.NewChunk()
			b.Add(api)
		}, 2, 0, 1, 0},
		{"tail longer than the record is invalid", func(b *spooltest.Builder) {
			rec, _ := tracing.APICall{Args: []byte("x")}.AppendBinary(nil)
			rec[20] = 200
			b.AddRaw(rec)
		}, 0, 0, 1, 0},
		{"record shorter than its kind is invalid", func(b *spooltest.Builder) {
			rec := []byte{16, 0, 0, 0, byte(tracing.KindKernelDispatch), 0, 1, 0xC5,
				0, 0, 0, 0, 0, 0, 0, 0}
			b.AddRaw(rec)
		}, 0, 0, 1, 0},
		{"records span chunks", func(b *spooltest.Builder) {
			for i := 0; i < 3000; i++ {
				b.Add(api)
			}
		}, 3000, 0, 0, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := spooltest.New(testProcess)
			tc.build(b)
			r, err := tracing.NewReader(b.Bytes())
			require.NoError(t, err)
			for r.Next() {
			}
			s := r.Stats()
			require.Equal(t, tc.records, s.Records)
			require.Equal(t, tc.torn, s.Torn)
			require.Equal(t, tc.invalid, s.Invalid)
			require.Equal(t, tc.skips, s.Skipped)
		})
	}
}

func TestReaderHeaderErrors(t *testing.T) {
	good := spooltest.New(testProcess).Bytes()
	bad := func(mut func([]byte)) []byte {
		b := append([]byte(nil), good...)
		mut(b)
		return b
	}
	_, err := tracing.NewReader(good[:100])
	require.ErrorIs(t, err, tracing.ErrNotSpool)
	_, err = tracing.NewReader(bad(func(b []byte) { b[0] = 0 }))
	require.ErrorIs(t, err, tracing.ErrNotSpool)
	_, err = tracing.NewReader(bad(func(b []byte) { b[8] = 9 }))
	var ve *tracing.VersionError
	require.ErrorAs(t, err, &ve)
	require.Contains(t, err.Error(), "version 9")
}

func TestReaderUnusedAndTruncatedChunks(t *testing.T) {
	b := spooltest.New(testProcess)
	b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime})
	b.NewChunk()
	b.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime})
	data := b.Bytes()
	// A chunk handed out but never stamped (writer died first) is ignored.
	unstamped := append([]byte(nil), data...)
	copy(unstamped[2*tracing.ChunkSize:], make([]byte, 4))
	r, err := tracing.NewReader(unstamped)
	require.NoError(t, err)
	n := 0
	for r.Next() {
		n++
	}
	require.Equal(t, 1, n)
	// A file cut short (a segment never allocated) reads up to its end.
	r, err = tracing.NewReader(data[:2*tracing.ChunkSize])
	require.NoError(t, err)
	n = 0
	for r.Next() {
		n++
	}
	require.Equal(t, 1, n)
}

func TestListOrdersByStartTime(t *testing.T) {
	dir := t.TempDir()
	for _, ts := range []uint64{300, 20, 1000} {
		p := testProcess
		p.PID = int32(ts)
		p.StartBoottimeNs = ts
		_, err := spooltest.New(p).WriteFile(dir)
		require.NoError(t, err)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "other.txt"), nil, 0o600))
	paths, err := tracing.List(dir)
	require.NoError(t, err)
	var names []string
	for _, p := range paths {
		names = append(names, filepath.Base(p))
	}
	require.Equal(t, []string{"rpg-20-20-0.spool", "rpg-300-300-0.spool", "rpg-1000-1000-0.spool"}, names)
	_, err = tracing.List(filepath.Join(dir, "missing"))
	require.Error(t, err)
}

// A directory whose name holds glob characters (an output or spool path
// with `[`, `\` or `*`, which users may choose) lists its spools: the
// directory is never part of a pattern. Before, List globbed the joined
// path and found no spool in out[1], so a rank's records were lost.
func TestListInADirectoryNamedLikeAPattern(t *testing.T) {
	for _, name := range []string{"out[1]", `back\slash`, "star*", "q?"} {
		dir := filepath.Join(t.TempDir(), name)
		require.NoError(t, os.Mkdir(dir, 0o700))
		_, err := spooltest.New(testProcess).WriteFile(dir)
		require.NoError(t, err)
		paths, err := tracing.List(dir)
		require.NoError(t, err)
		require.Len(t, paths, 1, name)
		require.Equal(t, dir, filepath.Dir(paths[0]))
	}
	// A sibling the pattern would have matched is not listed.
	root := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(root, "out[1]"), 0o700))
	require.NoError(t, os.Mkdir(filepath.Join(root, "out1"), 0o700))
	_, err := spooltest.New(testProcess).WriteFile(filepath.Join(root, "out1"))
	require.NoError(t, err)
	paths, err := tracing.List(filepath.Join(root, "out[1]"))
	require.NoError(t, err)
	require.Empty(t, paths, "out1's spool is not out[1]'s")
}

func FuzzSpoolReader(f *testing.F) {
	// Seeds are the record streams of the spools in testdata/spool (their
	// first chunk, trailing zeros cut): small inputs keep the fuzzer fast.
	seeds, _ := filepath.Glob("../../testdata/spool/*.spool")
	require.NotEmpty(f, seeds)
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		require.NoError(f, err)
		require.Greater(f, len(data), tracing.ChunkSize+tracing.ChunkHeaderSize)
		f.Add(bytes.TrimRight(data[tracing.ChunkSize+tracing.ChunkHeaderSize:], "\x00"))
	}
	header := spooltest.New(testProcess).Bytes()[:tracing.ChunkSize]
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < tracing.ChunkSize {
			chunk := make([]byte, tracing.ChunkSize)
			copy(chunk, []byte{0x43, 0x48, 0x4e, 0x4b, 1, 0, 0, 0, 1})
			copy(chunk[tracing.ChunkHeaderSize:], data)
			data = append(append([]byte(nil), header...), chunk...)
		}
		r, err := tracing.NewReader(data)
		if err != nil {
			return
		}
		n := uint64(0)
		for r.Next() {
			_ = decodeCurrent(r)
			n++
		}
		s := r.Stats()
		require.Equal(t, n, s.Records)
	})
}

// compactAPI builds a version-2 (compact) API record as the preload library
// writes it: no thread id, duration instead of end.
func compactAPI(kind tracing.Kind, domain uint8, fn uint16, corr, start uint64, dur uint32, args []byte) []byte {
	size := (32 + len(args) + 7) &^ 7
	r := make([]byte, size)
	le := binary.LittleEndian
	le.PutUint32(r, uint32(size))
	le.PutUint16(r[4:], uint16(kind))
	r[6], r[7] = 2, 0xC5
	le.PutUint16(r[8:], fn)
	r[10], r[11] = domain, byte(size-32-len(args))
	le.PutUint32(r[12:], dur)
	le.PutUint64(r[16:], corr)
	le.PutUint64(r[24:], start)
	copy(r[32:], args)
	return r
}

// threadRec builds the record that names a chunk's new writer.
func threadRec(tid uint32) []byte {
	r := make([]byte, 16)
	binary.LittleEndian.PutUint32(r, 16)
	binary.LittleEndian.PutUint16(r[4:], 13)
	r[6], r[7] = 1, 0xC5
	binary.LittleEndian.PutUint32(r[8:], tid)
	return r
}

// TestReaderCompactAPIRecords: version-2 API records take their thread from
// the chunk header, then from the THREAD record that hands the chunk to a
// new writer; version-1 records keep their own; both decode alike.
func TestReaderCompactAPIRecords(t *testing.T) {
	sp := spooltest.New(testProcess) // the chunk header names thread 1
	sp.AddRaw(compactAPI(tracing.KindHIPAPI, 1, 7, 9, 100, 5, []byte("abc")))
	sp.AddRaw(threadRec(42))
	sp.AddRaw(compactAPI(tracing.KindHSAAPI, 3, 300, 10, 1<<40, 0xffffffff, nil))
	sp.Add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 70000, TID: 77,
		CorrelationID: 11, Start: 1, End: 1 << 40})
	sp.AddRaw(compactAPI(tracing.KindHIPAPI, 2, 8, 12, 200, 0, []byte("12345678")))
	r, err := tracing.NewReader(sp.Bytes())
	require.NoError(t, err)
	var got []tracing.APICall
	for r.Next() {
		a := r.APICall()
		if len(a.Args) == 0 {
			a.Args = nil
		}
		got = append(got, a)
	}
	require.Equal(t, []tracing.APICall{
		{Domain: tracing.DomainHIPRuntime, Function: 7, TID: 1, CorrelationID: 9, Start: 100, End: 105,
			Args: []byte("abc")},
		{Domain: tracing.DomainHSACore, Function: 300, TID: 42, CorrelationID: 10, Start: 1 << 40,
			End: 1<<40 + 0xffffffff},
		{Domain: tracing.DomainHIPRuntime, Function: 70000, TID: 77, CorrelationID: 11, Start: 1,
			End: 1 << 40},
		{Domain: tracing.DomainHIPCompiler, Function: 8, TID: 42, CorrelationID: 12, Start: 200,
			End: 200, Args: []byte("12345678")},
	}, got)
	st := r.Stats()
	require.Equal(t, uint64(4), st.Records)
	require.Zero(t, st.Invalid+st.Skipped+st.Torn)

	// A compact record whose padding claims more than it holds is invalid.
	bad := compactAPI(tracing.KindHIPAPI, 1, 7, 9, 100, 5, nil)
	bad[11] = 8
	sp = spooltest.New(testProcess)
	sp.AddRaw(bad)
	r, err = tracing.NewReader(sp.Bytes())
	require.NoError(t, err)
	require.False(t, r.Next())
	require.Equal(t, uint64(1), r.Stats().Invalid)
}

// clockRec is an rpg_clock_rec: ticks t convert to ns + (t-tsc)*mult/2^32.
func clockRec(tsc, ns, mult uint64) []byte {
	rec := make([]byte, 32)
	binary.LittleEndian.PutUint32(rec, 32)
	binary.LittleEndian.PutUint16(rec[4:], 14) // RPG_KIND_CLOCK
	rec[6], rec[7] = 1, 0xC5
	binary.LittleEndian.PutUint64(rec[8:], tsc)
	binary.LittleEndian.PutUint64(rec[16:], ns)
	binary.LittleEndian.PutUint64(rec[24:], mult)
	return rec
}

// tickCall is a version-3 compact HSA record: start and duration in ticks.
func tickCall(function uint16, corr, start uint64, dur uint32) []byte {
	rec := make([]byte, 32)
	binary.LittleEndian.PutUint32(rec, 32)
	binary.LittleEndian.PutUint16(rec[4:], uint16(tracing.KindHSAAPI))
	rec[6], rec[7] = 3, 0xC5
	binary.LittleEndian.PutUint16(rec[8:], function)
	rec[10] = uint8(tracing.DomainHSACore)
	binary.LittleEndian.PutUint32(rec[12:], dur)
	binary.LittleEndian.PutUint64(rec[16:], corr)
	binary.LittleEndian.PutUint64(rec[24:], start)
	return rec
}

// Tick-stamped API records convert with the last clock record of their own
// chunk, forwards and backwards from its anchor; one with no clock record
// before it in its chunk cannot be converted and is counted invalid.
func TestReaderConvertsTickRecords(t *testing.T) {
	const half = 1 << 31 // 0.5 ns per tick
	b := spooltest.New(testProcess)
	b.AddRaw(clockRec(1_000_000, 5_000_000_000, half))
	b.AddRaw(tickCall(1, 1, 1_000_400, 100))            // 200 ns after the anchor, 50 ns long
	b.AddRaw(tickCall(2, 2, 999_000, 2))                // 500 ns before it, 1 ns long
	b.AddRaw(clockRec(2_000_000, 5_000_600_000, 3<<31)) // re-anchored: 1.5 ns per tick
	b.AddRaw(tickCall(3, 3, 2_000_010, 4))
	b.NewChunk()
	b.AddRaw(tickCall(4, 4, 2_000_010, 4)) // the clock record stayed in the other chunk
	r, err := tracing.NewReader(b.Bytes())
	require.NoError(t, err)
	var got [][3]uint64
	for r.Next() {
		c := r.APICall()
		got = append(got, [3]uint64{c.CorrelationID, c.Start, c.End})
	}
	require.Equal(t, [][3]uint64{
		{1, 5_000_000_200, 5_000_000_250},
		{2, 4_999_999_500, 4_999_999_501},
		{3, 5_000_600_015, 5_000_600_021},
	}, got)
	require.Equal(t, uint64(1), r.Stats().Invalid)
}

// A FIFO or a symlink named like a spool is refused at once (never waited
// on, never followed), as not a spool.
func TestOpenRefusesFIFOsAndSymlinks(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "rpg-1-1-0.spool")
	require.NoError(t, syscall.Mkfifo(fifo, 0o600))
	_, err := tracing.Open(fifo)
	require.ErrorIs(t, err, tracing.ErrNotSpool)
	require.Contains(t, err.Error(), "not a regular file")

	target := filepath.Join(dir, "target")
	require.NoError(t, os.WriteFile(target, make([]byte, tracing.ChunkSize), 0o600))
	link := filepath.Join(dir, "rpg-2-1-0.spool")
	require.NoError(t, os.Symlink(target, link))
	_, err = tracing.Open(link)
	require.ErrorIs(t, err, tracing.ErrNotSpool)
	require.Contains(t, err.Error(), "a symbolic link")
}

// Hide passes over a kind, also after Rewind, and still counts its records.
func TestHideSkipsAKind(t *testing.T) {
	b := spooltest.New(testProcess)
	for _, rec := range oneOfEach {
		b.Add(rec)
	}
	r, err := tracing.NewReader(b.Bytes())
	require.NoError(t, err)
	r.Hide(tracing.KindMarker)
	for pass := 0; pass < 2; pass++ {
		n := 0
		for r.Next() {
			require.NotEqual(t, tracing.KindMarker, r.Kind())
			n++
		}
		markers := int(r.Stats().ByKind[tracing.KindMarker])
		require.Positive(t, markers)
		require.Equal(t, len(oneOfEach)-markers, n)
		require.EqualValues(t, len(oneOfEach), r.Stats().Records)
		r.Rewind()
	}
}

// pcSampleV1 is a PC-sample record as the shim wrote it before stochastic
// sampling (version 1: no method word, host trap only).
type pcSampleV1 struct{ tracing.PCSampleBatch }

func (b pcSampleV1) AppendBinary(out []byte) ([]byte, error) {
	v2, err := b.PCSampleBatch.AppendBinary(nil)
	if err != nil {
		return nil, err
	}
	rec := append(append([]byte{}, v2[:24]...), v2[32:]...)
	binary.LittleEndian.PutUint32(rec, uint32(len(rec)))
	rec[6] = 1
	return append(out, rec...), nil
}

// TestPCSampleRecordVersion1 reads a spool kept by a rocprof-go from before
// the record grew its method word: its samples are host-trap samples, none
// skipped or invalid.
func TestPCSampleRecordVersion1(t *testing.T) {
	samples := tracing.PCSample{PC: 0x1010, ExecMask: ^uint64(0), Timestamp: 5}.Encode(tracing.PCSample{PC: 0x1020}.Encode(nil))
	b := spooltest.New(testProcess)
	b.Add(pcSampleV1{tracing.PCSampleBatch{AgentNode: 2, Lost: 3, Samples: samples}})
	b.Add(tracing.String{Table: 18, ID: 1, Value: []byte("after")})
	r, err := tracing.NewReader(b.Bytes())
	require.NoError(t, err)
	require.True(t, r.Next())
	require.Equal(t, tracing.KindPCSample, r.Kind())
	got := r.PCSampleBatch()
	require.Equal(t, tracing.PCSamplingHostTrap, got.Method)
	require.Equal(t, uint32(2), got.AgentNode)
	require.Equal(t, uint64(3), got.Lost)
	require.Equal(t, 2, got.Count())
	require.Equal(t, uint64(0x1010), got.Sample(1).PC)
	require.True(t, r.Next(), "the record after it is read")
	require.False(t, r.Next())
	st := r.Stats()
	require.Zero(t, st.Skipped)
	require.Zero(t, st.Invalid)
}

// A negative entry offset (a descriptor after its code) survives the round
// trip, and a record from before the field (its last word reserved, 0) reads
// as unknown.
func TestKernelSymbolEntryOffset(t *testing.T) {
	for _, off := range []int32{-0x40, 0x1180, 0} {
		b := spooltest.New(testProcess)
		b.Add(tracing.KernelSymbol{KernelID: 1, EntryOffset: off, Name: []byte("k.kd")})
		r, err := tracing.NewReader(b.Bytes())
		require.NoError(t, err)
		require.True(t, r.Next())
		require.Equal(t, off, r.KernelSymbol().EntryOffset)
	}
}
