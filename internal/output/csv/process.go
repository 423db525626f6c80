package csv

import (
	"strconv"

	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// csvKernel is a kernel symbol as the CSV columns need it.
type csvKernel struct {
	name         string // formatted per -M/-T
	ldsBlockSize uint64 // static LDS rounded up to 512 bytes
	vgpr, agpr   uint32
	sgpr         uint32
	object       uint64 // the kernel object (descriptor address), rocprof v1's obj
}

// csvProcess is the CSV writers' view of a catalogued spool: the
// catalogue, and the kernel columns the rows ask for per dispatch (made
// once per kernel).
type csvProcess struct {
	*model.Catalogue
	kernels map[uint64]*csvKernel
}

func newCSVProcess(p *model.Catalogue) *csvProcess {
	return &csvProcess{Catalogue: p, kernels: map[uint64]*csvKernel{}}
}

// kernel returns the CSV columns of a kernel id. A kernel whose symbol the
// spool lost is named unknown_kernel_<id>, its descriptor columns taken
// from its first dispatch, so a dispatch is never dropped for want of its
// symbol. Only the reading goroutine calls it.
func (p *csvProcess) kernel(id uint64, d *tracing.KernelDispatch) *csvKernel {
	if k, ok := p.kernels[id]; ok {
		return k
	}
	var k *csvKernel
	if s, ok := p.Symbols[id]; ok && !s.Lost {
		k = &csvKernel{name: s.Display, ldsBlockSize: model.RoundUp(uint64(s.GroupSegmentSize), 512),
			vgpr: s.VGPRCount, agpr: s.AGPRCount, sgpr: s.SGPRCount, object: s.KernelObject}
	} else {
		k = &csvKernel{name: "unknown_kernel_" + strconv.FormatUint(id, 10),
			ldsBlockSize: model.RoundUp(uint64(d.GroupSegmentSize), 512),
			vgpr:         d.VGPRCount, agpr: d.AGPRCount, sgpr: d.SGPRCount}
	}
	p.kernels[id] = k
	return k
}
