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
	// Launch is a kernel dispatch's launch configuration (zero when the
	// input does not hold it, and for other domains).
	Launch Launch
	// Bytes is a memory copy's size, -1 when the input does not hold it
	// (rocprofv3's memory_copy_trace.csv has no size column).
	Bytes int64
}

// Launch is a dispatch's launch configuration: two dispatches of one kernel
// with different grids or LDS do different work, so a comparison of
// durations is fair only within one configuration.
type Launch struct {
	Grid, Workgroup [3]int64
	LDS             int64 // LDS bytes, rounded up to 512 as rocprofv3's LDS_Block_Size is
	Scratch         int64 // scratch (private segment) bytes per work-item
}

// String names a configuration: "grid 1024x1x1 block 256x1x1 lds 512 scratch 0".
func (l Launch) String() string {
	if l == (Launch{}) {
		return ""
	}
	dims := func(d [3]int64) string {
		return strconv.FormatInt(d[0], 10) + "x" + strconv.FormatInt(d[1], 10) + "x" + strconv.FormatInt(d[2], 10)
	}
	return "grid " + dims(l.Grid) + " block " + dims(l.Workgroup) +
		" lds " + strconv.FormatInt(l.LDS, 10) + " scratch " + strconv.FormatInt(l.Scratch, 10)
}

// LDSBlock rounds a dispatch's LDS bytes up to the 512-byte blocks
// rocprofv3's LDS_Block_Size column reports.
func LDSBlock(bytes int64) int64 { return (bytes + 511) / 512 * 512 }

// SizeClass names the power-of-two size range a copy of n bytes falls in
// ("64 KiB-128 KiB"): copies are compared within one class, since their
// durations grow with their size. "" for an unknown size.
func SizeClass(n int64) string {
	if n < 0 {
		return ""
	}
	if n == 0 {
		return "0 B"
	}
	lo := int64(1)
	for lo <= n/2 {
		lo *= 2
	}
	return byteSize(lo) + "-" + byteSize(2*lo)
}

func byteSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	u := 0
	for n >= 1024 && n%1024 == 0 && u < len(units)-1 {
		n /= 1024
		u++
	}
	return strconv.FormatInt(n, 10) + " " + units[u]
}

// Duration returns End-Start in ns (0 when the clock went backwards).
func (e *Event) Duration() int64 {
	if e.End < e.Start {
		return 0
	}
	return e.End - e.Start
}
