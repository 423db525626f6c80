package model

import "github.com/rocprof-go/rocprof-go/internal/tracing"

// Domain is an output domain: the unit rocprofv3 counts, names and
// summarises records by. The order is rocprofv3's domain enum, which fixes
// the order of the per-domain summary tables.
type Domain int

const (
	DomHSA Domain = iota
	DomHIP
	DomMarker
	DomKernel
	DomCopy
	DomScratch
	DomCounter
	DomAlloc
	DomRCCL
	NumDomains
)

// DomainInfo is a row of the domain table.
type DomainInfo struct {
	Kind     tracing.Kind
	Column   string // rocprofv3's domain name: domain_stats.csv, summaries, run.json
	Category string // Perfetto category, OTF2 region group
	JSON     string // JSON buffer_records key
	CSVFile  string // <prefix>_<csvFile>.csv
	CSVStats string // <prefix>_<csvStats>.csv with --stats; "" when rocprofv3 writes none
	Parquet  string // <prefix>_<parquet>.parquet; the hive partition domain=<parquet> ("kernels": the table analysis notebooks look for)
}

// Domains is the one table of the output domains: the record kind each
// comes from and every name it has in every format. A new record kind is a
// row here, plus a case in each writer that shows it.
var Domains = [NumDomains]DomainInfo{
	DomHSA:     {tracing.KindHSAAPI, "HSA_API", "hsa_api", "hsa_api", "hsa_api_trace", "hsa_api_stats", "hsa_api"},
	DomHIP:     {tracing.KindHIPAPI, "HIP_API", "hip_api", "hip_api", "hip_api_trace", "hip_api_stats", "hip_api"},
	DomMarker:  {tracing.KindMarker, "MARKER_API", "marker_api", "marker_api", "marker_api_trace", "marker_api_stats", "marker_api"},
	DomKernel:  {tracing.KindKernelDispatch, "KERNEL_DISPATCH", "kernel_dispatch", "kernel_dispatch", "kernel_trace", "kernel_stats", "kernels"},
	DomCopy:    {tracing.KindMemoryCopy, "MEMORY_COPY", "memory_copy", "memory_copy", "memory_copy_trace", "memory_copy_stats", "memory_copy"},
	DomScratch: {tracing.KindScratchMemory, "SCRATCH_MEMORY", "scratch_memory", "scratch_memory", "scratch_memory_trace", "scratch_memory_stats", "scratch_memory"},
	DomCounter: {tracing.KindCounterSample, "COUNTER_COLLECTION", "counter_collection", "counter_collection", "counter_collection", "", "counter_collection"},
	DomAlloc:   {tracing.KindMemoryAllocation, "MEMORY_ALLOCATION", "memory_allocation", "memory_allocation", "memory_allocation_trace", "memory_allocation_stats", "memory_allocation"},
	DomRCCL:    {tracing.KindRCCLAPI, "RCCL_API", "rccl_api", "rccl_api", "rccl_api_trace", "rccl_api_stats", "rccl_api"},
}

// CSVOrder is the order rocprofv3 writes the CSV files in (and the rows of
// domain_stats.csv).
var CSVOrder = [NumDomains]Domain{DomKernel, DomHSA, DomHIP, DomCopy, DomAlloc, DomMarker, DomCounter, DomScratch, DomRCCL}

// String is the domain's rocprofv3 name (HIP_API, KERNEL_DISPATCH, ...).
func (d Domain) String() string { return Domains[d].Column }

// kindDomains maps record kinds to domains, from the table (-1: a record
// that is not an event: strings, symbols, agents, ...).
var kindDomains = func() (m [256]Domain) {
	for i := range m {
		m[i] = -1
	}
	for d := range Domains {
		m[Domains[d].Kind] = Domain(d)
	}
	return m
}()

// KindDomain maps a spool record kind to its output domain (-1: not an event).
func KindDomain(k tracing.Kind) Domain {
	if int(k) >= len(kindDomains) {
		return -1
	}
	return kindDomains[k]
}
