package rocpdtest

import "fmt"

// RankGUID returns the uuid of sample rank r.
func RankGUID(r int) string {
	return fmt.Sprintf("0000ddb5-8903-7903-b269-%012x", 0xcd8d3745b000+r)
}

// Sample returns a small deterministic process for MPI rank r: three kernels
// (gemm 10 dispatches, axpy 5, reduce 2), HIP and HSA calls, a marker range
// and a mark, two copies and an allocation pair. Durations grow with the rank
// so per-rank tables differ.
func Sample(r int) Process {
	pid := int64(1000 + r)
	p := Process{
		GUID: RankGUID(r), PID: pid, PPID: 1, Hostname: fmt.Sprintf("node%d", r/2),
		Command: "./app --size 1024", Start: 1_000_000, End: 9_000_000,
		Env: map[string]string{"OMPI_COMM_WORLD_RANK": fmt.Sprint(r), "HOME": "/root"},
	}
	t := int64(1_100_000)
	step := func(d int64) (int64, int64) { s := t; t += d + 500; return s, s + d }
	tid := pid
	for i := 0; i < 4; i++ {
		s, e := step(2000 + int64(i)*100)
		p.APICalls = append(p.APICalls, APICall{Category: "HIP_RUNTIME_API_EXT", Name: "hipMalloc", TID: tid, Start: s, End: e})
	}
	s, e := step(1500)
	p.APICalls = append(p.APICalls, APICall{Category: "HSA_CORE_API", Name: "hsa_queue_create", TID: tid, Start: s, End: e})
	s, e = step(300_000)
	p.Markers = append(p.Markers, Marker{Op: "roctxRangePushA", Message: "compute phase", TID: tid, Start: s, End: e})
	t = s + 1000
	s, _ = step(0)
	p.Markers = append(p.Markers, Marker{Op: "roctxMarkA", Message: "checkpoint", TID: tid, Start: s, End: s})
	kernels := []struct {
		name, mangled string
		n             int
		dur           int64
	}{{"gemm(float*, float*, float*)", "_Z4gemmPfS_S_.kd", 10, 10_000}, {"axpy(float, float*)", "_Z4axpyfPf.kd", 5, 4_000},
		{"reduce(float*)", "_Z6reducePf.kd", 2, 7_000}}
	for _, k := range kernels {
		for i := 0; i < k.n; i++ {
			as, ae := step(800)
			p.APICalls = append(p.APICalls, APICall{Category: "HIP_RUNTIME_API_EXT", Name: "hipLaunchKernel", TID: tid, Start: as, End: ae})
			corr := int64(len(p.APICalls) + len(p.Markers))
			d := k.dur + int64(r)*100 + int64(i%3)*50
			ks, ke := step(d)
			p.Dispatches = append(p.Dispatches, Dispatch{Kernel: k.name, Mangled: k.mangled, TID: tid, Queue: 1, Stream: 0,
				Start: ks, End: ke, Grid: [3]int64{1024, 1, 1}, Workgroup: [3]int64{256, 1, 1}, Corr: corr})
		}
	}
	p.Counters = []Counter{
		{Dispatch: 0, Name: "SQ_WAVES", Values: []float64{8, 8, 8, 8}},
		{Dispatch: 0, Name: "GRBM_COUNT", Values: []float64{0.5}},
		{Dispatch: 10, Name: "SQ_WAVES", Values: []float64{4, 4}},
	}
	s, e = step(5000)
	p.Copies = append(p.Copies, Copy{Direction: "MEMORY_COPY_HOST_TO_DEVICE", Src: 0, Dst: 1, Size: 4096, TID: tid, Start: s, End: e})
	s, e = step(6000)
	p.Copies = append(p.Copies, Copy{Direction: "MEMORY_COPY_DEVICE_TO_HOST", Src: 1, Dst: 0, Size: 4096, TID: tid, Start: s, End: e})
	s, e = step(100)
	p.Allocs = append(p.Allocs, Alloc{Type: "ALLOC", Level: "REAL", Agent: 1, Address: 0x7f0000000000, Size: 1 << 20, TID: tid, Start: s, End: e})
	s, e = step(100)
	p.Allocs = append(p.Allocs, Alloc{Type: "FREE", Level: "REAL", Address: 0x7f0000000000, TID: tid, Start: s, End: e})
	return p
}
