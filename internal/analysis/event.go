package analysis

import (
	"strconv"
	"strings"
)

// Domain is an output domain, named as rocprofv3's domain_stats.csv names it.
type Domain string

// Domains, in the order summaries list them.
const (
	Kernel     Domain = "KERNEL_DISPATCH"
	HIP        Domain = "HIP_API"
	HSA        Domain = "HSA_API"
	Marker     Domain = "MARKER_API"
	Copy       Domain = "MEMORY_COPY"
	Allocation Domain = "MEMORY_ALLOCATION"
	Scratch    Domain = "SCRATCH_MEMORY"
	RCCL       Domain = "RCCL_API"
	ROCDecode  Domain = "ROCDECODE_API"
	ROCJPEG    Domain = "ROCJPEG_API"
)

// Domains lists every domain in summary order.
var Domains = []Domain{Kernel, HIP, HSA, Marker, Copy, Allocation, Scratch, RCCL, ROCDecode, ROCJPEG}

// Title is the domain's table title, e.g. "KERNEL_DISPATCH".
func (d Domain) Title() string { return string(d) }

// Order returns the domain's position in Domains (unknown domains last).
func (d Domain) Order() int {
	for i, x := range Domains {
		if x == d {
			return i
		}
	}
	return len(Domains)
}

// CategoryDomain maps a ROCpd event category (buffer kind name, e.g.
// HIP_RUNTIME_API_EXT) or a CSV Domain column to an output domain.
func CategoryDomain(category string) Domain {
	switch {
	case strings.HasPrefix(category, "HIP_"):
		return HIP
	case strings.HasPrefix(category, "HSA_"):
		return HSA
	case strings.HasPrefix(category, "MARKER_"):
		return Marker
	case strings.HasPrefix(category, "RCCL"):
		return RCCL
	case strings.HasPrefix(category, "ROCDECODE"):
		return ROCDecode
	case strings.HasPrefix(category, "ROCJPEG"):
		return ROCJPEG
	case category == "KERNEL_DISPATCH":
		return Kernel
	case category == "MEMORY_COPY":
		return Copy
	case category == "MEMORY_ALLOCATION":
		return Allocation
	case category == "SCRATCH_MEMORY":
		return Scratch
	}
	return Domain(strings.ToUpper(category))
}

// Process identifies where an event ran: one process image of one run.
type Process struct {
	Key      string // unique within a run: guid, or the CSV file prefix
	PID      int64
	Hostname string
	Rank     int // MPI/SLURM rank, -1 unknown
}

// Label is a short human name: "rank 3", else "pid 1234@host".
func (p *Process) Label() string {
	if p == nil {
		return ""
	}
	if p.Rank >= 0 {
		return "rank " + strconv.Itoa(p.Rank)
	}
	l := "pid " + strconv.FormatInt(p.PID, 10)
	if p.Hostname != "" {
		l += "@" + p.Hostname
	}
	return l
}

// Event is one timed record. Readers reuse one Event: copy what you keep.
type Event struct {
	Domain     Domain
	Name       string // the summary key: kernel, function, marker text, direction, operation
	Start, End int64
	Process    *Process
}

// Duration returns End-Start in ns (0 when the clock went backwards).
func (e *Event) Duration() int64 {
	if e.End < e.Start {
		return 0
	}
	return e.End - e.Start
}
