package outputtest

import (
	"encoding"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// Agent is an agent record with every field set (distinct values), as
// the CSV goldens expect.
func Agent(node, logical, typeIndex uint64, typ tracing.AgentType, name string) tracing.AgentInfo {
	var a tracing.AgentInfo
	for i := range a.Values {
		a.Values[i] = uint64(i) * 10
	}
	a.Values[tracing.AgentNodeID] = node
	a.Values[tracing.AgentLogicalNodeID] = logical
	a.Values[tracing.AgentTypeField] = uint64(typ)
	a.Values[tracing.AgentLogicalNodeTypeID] = typeIndex
	if typ == tracing.AgentCPU {
		a.Values[tracing.AgentCPUCoresCount] = 8
		a.Values[tracing.AgentSIMDCount] = 0
		a.Values[tracing.AgentMaxWavesPerSIMD] = 0
	} else {
		a.Values[tracing.AgentCPUCoresCount] = 0
	}
	a.Name = name
	a.VendorName = "AMD"
	a.ProductName = name + " product"
	a.ModelName = ""
	return a
}

// ReadTree reads every file under root, by path relative to it.
func ReadTree(t *testing.T, root string) map[string]string {
	out := map[string]string{}
	require.NoError(t, filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		out[rel] = string(data)
		return err
	}))
	return out
}

// Kernels are the fixture's kernel symbols, as loaded.
var Kernels = []string{
	"_Z15vectorAdd_floatPfPKfS1_i.kd",
	"_ZN7rocprim6detail11scan_kernelILb0EEEvPiS2_j.kd",
	"_Z6reducePdS_m.kd",
}

// RecordedDomains is how many domains the fixture records: every one but
// RCCL_API, the last (rccl_test.go takes RCCL calls through every writer).
func RecordedDomains() int { return int(model.DomRCCL) }

// Counts is what every format must hold per domain for one process
// built with n iterations.
func Counts(n int) [model.NumDomains]uint64 {
	var c [model.NumDomains]uint64
	c[model.DomHIP] = uint64(2 * n)
	c[model.DomHSA] = uint64(n)
	c[model.DomMarker] = uint64(n/2 + n/2 + 1) // ranges, marks, one pause
	c[model.DomKernel] = uint64(n)
	c[model.DomCopy] = uint64(n)
	c[model.DomAlloc] = uint64(2 * (n / 4))
	c[model.DomScratch] = uint64(2 * (n / 8))
	c[model.DomCounter] = uint64(2 * 2 * (n / 4))
	return c
}

// AgentRecord is an agent record of the fixture's machine.
func AgentRecord(node, logical, typeIdx uint64, typ tracing.AgentType, name string) tracing.AgentInfo {
	var a tracing.AgentInfo
	a.Values[tracing.AgentNodeID] = node
	a.Values[tracing.AgentLogicalNodeID] = logical
	a.Values[tracing.AgentTypeField] = uint64(typ)
	a.Values[tracing.AgentLogicalNodeTypeID] = typeIdx
	if typ == tracing.AgentCPU {
		a.Values[tracing.AgentCPUCoresCount] = 2
	} else {
		a.Values[tracing.AgentSIMDCount] = 440
	}
	a.Name, a.VendorName, a.ProductName, a.ModelName = name, "AMD", "Virtual "+name, name
	return a
}

// Emit emits one process's records to add.
func Emit(pid int32, n int, add func(encoding.BinaryAppender)) {
	add(AgentRecord(0, 0, 0, tracing.AgentCPU, "Virtual CPU"))
	add(AgentRecord(1, 1, 0, tracing.AgentGPU, "gfx90a"))
	add(AgentRecord(2, 2, 1, tracing.AgentGPU, "gfx90a"))
	for i, name := range []string{"hipMalloc", "hipLaunchKernel", "hipMemcpyAsync"} {
		add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: uint64(i), Value: []byte(name)})
	}
	for i, name := range []string{"hsa_queue_create", "hsa_signal_wait_scacquire"} {
		add(tracing.String{Table: uint32(tracing.DomainHSACore), ID: uint64(i), Value: []byte(name)})
	}
	add(tracing.String{Table: tracing.TableCounter, ID: 1, Value: []byte("SQ_WAVES")})
	add(tracing.String{Table: tracing.TableCounter, ID: 2, Value: []byte("GRBM_COUNT")})
	add(tracing.CodeObject{CodeObjectID: 1, Operation: tracing.CodeObjectLoad, AgentNode: 1,
		LoadBase: 0x7f0000000000, LoadSize: 4096, URI: []byte("file:///app#offset=0&size=4096")})
	for i, k := range Kernels {
		add(tracing.KernelSymbol{KernelID: uint64(i + 1), CodeObjectID: 1, KernelObject: 0x1000 * uint64(i+1),
			KernargSize: 32, GroupSegmentSize: 512, VGPRCount: 8, SGPRCount: 16, Name: []byte(k)})
	}
	base := uint64(1_000_000) * uint64(pid)
	tids := []uint32{uint32(pid), uint32(pid) + 1}
	for i := 0; i < n; i++ {
		t0 := base + uint64(i)*10_000
		tid := tids[i%2]
		corr := uint64(2*i + 1)
		add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: tid, CorrelationID: corr, Start: t0, End: t0 + 900})
		add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 2, TID: tid, CorrelationID: corr + 1, Start: t0 + 1000, End: t0 + 1500})
		add(tracing.APICall{Domain: tracing.DomainHSACore, Function: uint32(i % 2), TID: tid, CorrelationID: 0, Start: t0 + 100, End: t0 + 300})
		add(tracing.KernelDispatch{AgentNode: uint32(1 + i%2), TID: tid, QueueID: uint64(1 + i%2), StreamID: uint64(i % 3),
			DispatchID: uint64(i + 1), KernelID: uint64(1 + i%3), CorrelationID: corr, Start: t0 + 2000, End: t0 + 2000 + uint64(100+i%7*50),
			Grid: [3]uint32{1024, 1, 1}, Workgroup: [3]uint32{256, 1, 1}, GroupSegmentSize: 512, PrivateSegmentSize: 16,
			VGPRCount: 8, SGPRCount: 16})
		add(tracing.MemoryCopy{Direction: tracing.CopyDirection(1 + i%4), SrcAgentNode: 0, DstAgentNode: uint32(1 + i%2), TID: tid,
			Bytes: uint64(4096 * (i + 1)), StreamID: uint64(i % 3), CorrelationID: corr + 1, Start: t0 + 3000, End: t0 + 3400,
			SrcAddress: 0x1000, DstAddress: 0x2000})
		// Ranges on even iterations, marks on odd ones.
		if i%2 == 0 && i/2 < n/2 {
			add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange, TID: tid,
				CorrelationID: 0, Start: t0, End: t0 + 5000, Message: []byte(fmt.Sprintf("iteration %d", i%5))})
		}
		if i%2 == 1 && i/2 < n/2 {
			add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerMark, TID: tid,
				Start: t0 + 50, End: t0 + 50, Message: []byte("checkpoint")})
		}
		if i%4 == 0 && i/4 < n/4 {
			add(tracing.MemoryAllocation{Operation: tracing.AllocAllocate, AgentNode: 1, TID: tid, Address: 0x7000 + uint64(i), Size: 1 << 20, Start: t0 + 10, End: t0 + 60})
			add(tracing.MemoryAllocation{Operation: tracing.AllocFree, TID: tid, Address: 0x7000 + uint64(i), Start: t0 + 70, End: t0 + 90})
			for _, ctr := range []uint64{1, 2} {
				for inst := 0; inst < 2; inst++ {
					add(tracing.CounterSample{DispatchID: uint64(i + 1), CounterID: ctr, Value: float64(10*ctr) + float64(inst), AgentNode: uint32(1 + (i/4)%2),
						Dims: []tracing.CounterDim{{DimensionID: 1, Index: uint32(inst)}}})
				}
			}
		}
		if i%8 == 0 && i/8 < n/8 {
			add(tracing.ScratchMemory{Operation: tracing.ScratchAlloc, AgentNode: 1, TID: tid, QueueID: 1, Size: 65536, Flags: 1, Start: t0 + 2000, End: t0 + 2050})
			add(tracing.ScratchMemory{Operation: tracing.ScratchFree, AgentNode: 1, TID: tid, QueueID: 1, Start: t0 + 2500, End: t0 + 2520})
		}
	}
	add(tracing.Marker{Domain: tracing.DomainMarkerControl, Function: tracing.MarkerProfilerPause, TID: tids[0],
		Start: base + 5, End: base + 25})
}

// Info is the process header of the fixture's process pid.
func Info(pid int32) tracing.ProcessInfo {
	return tracing.ProcessInfo{PID: pid, PPID: 1, PGID: pid, SID: pid, PSize: 1,
		StartBoottimeNs: uint64(pid) * 1_000_000, StartRealtimeNs: 1_700_000_000_000_000_000,
		Hostname: "testhost", Argv: []string{"./app", "--size", "4"}, Environ: []string{"HOME=/root", "PATH=/usr/bin"},
		Cwd: "/srv/job", Exe: "/srv/job/app"}
}

// WriteSpools writes one spool per pid with n iterations each.
func WriteSpools(t testing.TB, dir string, pids []int32, n int) []string {
	t.Helper()
	var paths []string
	for _, pid := range pids {
		b := spooltest.New(Info(pid))
		Emit(pid, n, func(r encoding.BinaryAppender) { b.Add(r) })
		p, err := b.WriteFile(dir)
		require.NoError(t, err)
		paths = append(paths, p)
	}
	return paths
}

// StreamSpool writes a large spool without holding it, through the one
// spool writer (tracing.Writer) straight to the file.
func StreamSpool(t testing.TB, path string, pid int32, n int) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	defer f.Close()
	w := tracing.NewWriter(f, Info(pid), 1)
	Emit(pid, n, func(r encoding.BinaryAppender) { require.NoError(t, w.Add(r)) })
	require.NoError(t, w.Sync())
}

// NewInput writes one spool per pid with n iterations each and returns
// them as one output file set.
func NewInput(t testing.TB, pids []int32, n int) *model.Input {
	dir := t.TempDir()
	return &model.Input{Spools: WriteSpools(t, dir, pids, n), Config: model.Config{}}
}

// TempPrefix is an output prefix in a fresh temporary directory.
func TempPrefix(t testing.TB) string { return filepath.Join(t.TempDir(), "out") }
