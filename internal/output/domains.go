package output

import "github.com/rocprof-go/rocprof-go/internal/tracing"

// domain is an output domain: the unit rocprofv3 counts, names and
// summarises records by. The order is rocprofv3's domain enum, which fixes
// the order of the per-domain summary tables.
type domain int

const (
	domHSA domain = iota
	domHIP
	domMarker
	domKernel
	domCopy
	domScratch
	domCounter
	domAlloc
	domRCCL
	numDomains
)

// domains is the one table of the output domains: the record kind each
// comes from and every name it has in every format. A new record kind is a
// row here, plus a case in each writer that shows it.
var domains = [numDomains]struct {
	kind     tracing.Kind
	column   string // rocprofv3's domain name: domain_stats.csv, summaries, run.json
	category string // Perfetto category, OTF2 region group
	json     string // JSON buffer_records key
	csvFile  string // <prefix>_<csvFile>.csv
	csvStats string // <prefix>_<csvStats>.csv with --stats; "" when rocprofv3 writes none
	parquet  string // <prefix>_<parquet>.parquet; the hive partition domain=<parquet> ("kernels": the table analysis notebooks look for)
}{
	domHSA:     {tracing.KindHSAAPI, "HSA_API", "hsa_api", "hsa_api", "hsa_api_trace", "hsa_api_stats", "hsa_api"},
	domHIP:     {tracing.KindHIPAPI, "HIP_API", "hip_api", "hip_api", "hip_api_trace", "hip_api_stats", "hip_api"},
	domMarker:  {tracing.KindMarker, "MARKER_API", "marker_api", "marker_api", "marker_api_trace", "marker_api_stats", "marker_api"},
	domKernel:  {tracing.KindKernelDispatch, "KERNEL_DISPATCH", "kernel_dispatch", "kernel_dispatch", "kernel_trace", "kernel_stats", "kernels"},
	domCopy:    {tracing.KindMemoryCopy, "MEMORY_COPY", "memory_copy", "memory_copy", "memory_copy_trace", "memory_copy_stats", "memory_copy"},
	domScratch: {tracing.KindScratchMemory, "SCRATCH_MEMORY", "scratch_memory", "scratch_memory", "scratch_memory_trace", "scratch_memory_stats", "scratch_memory"},
	domCounter: {tracing.KindCounterSample, "COUNTER_COLLECTION", "counter_collection", "counter_collection", "counter_collection", "", "counter_collection"},
	domAlloc:   {tracing.KindMemoryAllocation, "MEMORY_ALLOCATION", "memory_allocation", "memory_allocation", "memory_allocation_trace", "memory_allocation_stats", "memory_allocation"},
	domRCCL:    {tracing.KindRCCLAPI, "RCCL_API", "rccl_api", "rccl_api", "rccl_api_trace", "rccl_api_stats", "rccl_api"},
}

// csvOrder is the order rocprofv3 writes the CSV files in (and the rows of
// domain_stats.csv).
var csvOrder = [numDomains]domain{domKernel, domHSA, domHIP, domCopy, domAlloc, domMarker, domCounter, domScratch, domRCCL}

func (d domain) String() string { return domains[d].column }

// kindDomains maps record kinds to domains, from the table (-1: a record
// that is not an event: strings, symbols, agents, ...).
var kindDomains = func() (m [256]domain) {
	for i := range m {
		m[i] = -1
	}
	for d := range domains {
		m[domains[d].kind] = domain(d)
	}
	return m
}()

// kindDomain maps a spool record kind to its output domain (-1: not an event).
func kindDomain(k tracing.Kind) domain {
	if int(k) >= len(kindDomains) {
		return -1
	}
	return kindDomains[k]
}
