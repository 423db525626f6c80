package rocpdtest

import (
	"encoding"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	rocpdout "github.com/rocprof-go/rocprof-go/internal/output/rocpd"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
	"github.com/rocprof-go/rocprof-go/internal/tracing/spooltest"
)

// RunSpool writes the spool a profiled process would have recorded into
// dir: every domain the spool carries, two threads, two GPUs, n iterations.
func RunSpool(dir string, pid int32, n int) (string, error) {
	b := spooltest.New(tracing.ProcessInfo{PID: pid, PPID: 1, PSize: 1, StartBoottimeNs: uint64(pid) * 1000,
		Hostname: "host", Argv: []string{"./app", "-n", "4"}, Environ: []string{"HOME=/root"}, Exe: "./app"})
	add := func(r encoding.BinaryAppender) { b.Add(r) }
	add(spooltest.Agent(0, 0, 0, tracing.AgentCPU, "CPU"))
	add(spooltest.Agent(2, 1, 0, tracing.AgentGPU, "gfx90a"))
	add(spooltest.Agent(3, 2, 1, tracing.AgentGPU, "gfx942"))
	for i, f := range []string{"hipMalloc", "hipLaunchKernel", "hipMemcpyAsync"} {
		add(tracing.String{Table: uint32(tracing.DomainHIPRuntime), ID: uint64(i + 1), Value: []byte(f)})
	}
	add(tracing.String{Table: uint32(tracing.DomainHSACore), ID: 7, Value: []byte("hsa_queue_create")})
	add(tracing.String{Table: tracing.TableCounter, ID: 5, Value: []byte("SQ_WAVES")})
	add(tracing.CodeObject{CodeObjectID: 1, Operation: tracing.CodeObjectLoad, AgentNode: 2, LoadBase: 0x7f00, LoadSize: 4096,
		URI: []byte("file:///app#offset=0&size=4096")})
	kernels := []string{"_Z4gemmPfS_S_.kd", "_ZN4axpy6kernelIfEEvT_PS1_.kd"}
	for i, k := range kernels {
		add(tracing.KernelSymbol{KernelID: uint64(i + 1), CodeObjectID: 1, KernelObject: 0x100 * uint64(i+1), KernargSize: 24,
			GroupSegmentSize: uint32(300 * (i + 1)), VGPRCount: 12, AGPRCount: 4, SGPRCount: 20, Name: []byte(k)})
	}
	tids := []uint32{uint32(pid), uint32(pid) + 3}
	base := uint64(pid) * 1_000_000
	for i := 0; i < n; i++ {
		t0, tid, corr := base+uint64(i)*10_000, tids[i%2], uint64(3*i+1)
		add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 1, TID: tid, CorrelationID: corr, Start: t0, End: t0 + 700})
		add(tracing.APICall{Domain: tracing.DomainHIPRuntime, Function: 2, TID: tid, CorrelationID: corr + 1, Start: t0 + 800, End: t0 + 950})
		add(tracing.APICall{Domain: tracing.DomainHSACore, Function: 7, TID: tid, CorrelationID: corr + 2, Start: t0 + 960, End: t0 + 990})
		add(tracing.KernelDispatch{AgentNode: uint32(2 + i%2), TID: tid, QueueID: uint64(1 + i%2), StreamID: uint64(i % 2),
			DispatchID: uint64(i + 1), KernelID: uint64(1 + i%2), CorrelationID: corr + 1, Start: t0 + 1000,
			End: t0 + 1000 + uint64(200+i*13), Grid: [3]uint32{4096, 2, 1}, Workgroup: [3]uint32{64, 2, 1},
			GroupSegmentSize: 600, PrivateSegmentSize: 32, VGPRCount: 12, AGPRCount: 4, SGPRCount: 20})
		add(tracing.MemoryCopy{Direction: tracing.CopyDirection(1 + i%4), SrcAgentNode: 0, DstAgentNode: uint32(2 + i%2), TID: tid,
			Bytes: 1 << 12, StreamID: uint64(i % 2), CorrelationID: corr, Start: t0 + 3000, End: t0 + 3300, SrcAddress: 0x10, DstAddress: 0x20})
		if i%3 == 0 {
			add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerThreadRange, TID: tid,
				CorrelationID: corr + 100, Start: t0, End: t0 + 5000, Message: []byte("step")})
			add(tracing.Marker{Domain: tracing.DomainMarkerCoreRange, Function: tracing.MarkerMark, TID: tid,
				CorrelationID: corr + 101, Start: t0 + 7, End: t0 + 7, Message: []byte("tick")})
			add(tracing.MemoryAllocation{Operation: tracing.AllocAllocate, AgentNode: 2, TID: tid, Address: 0x7000 + uint64(i),
				Size: 1 << 16, CorrelationID: corr, Start: t0 + 10, End: t0 + 20})
			add(tracing.MemoryAllocation{Operation: tracing.AllocFree, TID: tid, Address: 0x7000 + uint64(i),
				CorrelationID: corr, Start: t0 + 30, End: t0 + 40})
			add(tracing.ScratchMemory{Operation: tracing.ScratchAlloc, AgentNode: 2, TID: tid, Flags: 1, QueueID: 1,
				Size: 1 << 14, CorrelationID: corr + 1, Start: t0 + 1000, End: t0 + 1010})
			for inst := 0; inst < 3; inst++ {
				add(tracing.CounterSample{DispatchID: uint64(i + 1), CounterID: 5, Value: 2.5 + float64(inst),
					AgentNode: uint32(2 + i%2), Dims: []tracing.CounterDim{{DimensionID: 1, Index: uint32(inst)}}})
			}
		}
	}
	add(tracing.Marker{Domain: tracing.DomainMarkerControl, Function: tracing.MarkerProfilerPause, TID: tids[0],
		CorrelationID: 999, Start: base + 1, End: base + 2})
	return b.WriteFile(dir)
}

// WriterDB writes the database rocprof-go's own ROCpd writer makes of one
// RunSpool process, so readers are tested on the writer's output as well as
// on the SQL-built fixtures; spoolDir receives the spool.
func WriterDB(path, spoolDir string, pid int32, n int) error {
	spool, err := RunSpool(spoolDir, pid, n)
	if err != nil {
		return err
	}
	return rocpdout.Write(path, &model.Input{Spools: []string{spool}})
}
