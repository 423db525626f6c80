package json

import (
	"bufio"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/kernelname"
	"github.com/rocprof-go/rocprof-go/internal/output/model"
	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

// agentFieldNames are the JSON names of AgentInfo.Values, in
// agent_info.csv's order (Agent_Type is written as "type").
var agentFieldNames = [tracing.AgentNumericFields]string{
	"node_id", "logical_node_id", "type", "cpu_cores_count", "simd_count", "cpu_core_id_base",
	"simd_id_base", "max_waves_per_simd", "lds_size_in_kb", "gds_size_in_kb", "num_gws",
	"wave_front_size", "num_xcc", "cu_count", "array_count", "num_shader_banks",
	"simd_arrays_per_engine", "cu_per_simd_array", "simd_per_cu", "max_slots_scratch_cu",
	"gfx_target_version", "vendor_id", "device_id", "location_id", "domain", "drm_render_minor",
	"num_sdma_engines", "num_sdma_xgmi_engines", "num_sdma_queues_per_engine", "num_cp_queues",
	"max_engine_clk_ccompute", "max_engine_clk_fcompute", "sdma_fw_version", "fw_version",
	"capability", "cu_per_engine", "max_waves_per_cu", "family_id", "workgroup_max_size",
	"grid_max_size", "local_mem_size", "hive_id", "gpu_id", "workgroup_max_dim_x",
	"workgroup_max_dim_y", "workgroup_max_dim_z", "grid_max_dim_x", "grid_max_dim_y",
	"grid_max_dim_z", "logical_node_type_id",
}

// sdkKindNames names the SDK buffer-tracing kinds by number.
var sdkKindNames = [sdkKindLast]string{"NONE", "HSA_CORE_API", "HSA_AMD_EXT_API",
	"HSA_IMAGE_EXT_API", "HSA_FINALIZE_EXT_API", "HIP_RUNTIME_API", "HIP_COMPILER_API",
	"MARKER_CORE_API", "MARKER_CONTROL_API", "MARKER_NAME_API", "MEMORY_COPY", "KERNEL_DISPATCH",
	"SCRATCH_MEMORY", "CORRELATION_ID_RETIREMENT", "RCCL_API", "OMPT", "MEMORY_ALLOCATION",
	"RUNTIME_INITIALIZATION", "ROCDECODE_API", "ROCJPEG_API", "HIP_STREAM", "HIP_RUNTIME_API_EXT",
	"HIP_COMPILER_API_EXT", "ROCDECODE_API_EXT", "KFD_EVENT_PAGE_MIGRATE", "KFD_EVENT_PAGE_FAULT",
	"KFD_EVENT_QUEUE", "KFD_EVENT_UNMAP_FROM_GPU", "KFD_EVENT_DROPPED_EVENTS", "KFD_PAGE_MIGRATE",
	"KFD_PAGE_FAULT", "KFD_QUEUE", "MARKER_CORE_RANGE_API"}

// Operation names of the kinds whose operations are fixed, by SDK number.
var fixedOperations = map[int][]string{
	sdkMarkerCoreAPI:    {"roctxMarkA", "roctxRangePushA", "roctxRangePop", "roctxRangeStartA", "roctxRangeStop", "roctxGetThreadId"},
	sdkMarkerControlAPI: {"roctxProfilerPause", "roctxProfilerResume"},
	sdkMarkerNameAPI:    {"roctxNameOsThread", "roctxNameHsaAgent", "roctxNameHipDevice", "roctxNameHipStream"},
	sdkMarkerCoreRange:  {"roctxMarkA", "roctxThreadRangeA", "roctxProcessRangeA", "roctxGetThreadId"},
	sdkMemoryCopy:       {"MEMORY_COPY_NONE", "MEMORY_COPY_HOST_TO_HOST", "MEMORY_COPY_HOST_TO_DEVICE", "MEMORY_COPY_DEVICE_TO_HOST", "MEMORY_COPY_DEVICE_TO_DEVICE"},
	sdkKernelDispatch:   {"KERNEL_DISPATCH_NONE", "KERNEL_DISPATCH_ENQUEUE", "KERNEL_DISPATCH_COMPLETE"},
	sdkScratchMemory:    {"SCRATCH_MEMORY_NONE", "SCRATCH_MEMORY_ALLOC", "SCRATCH_MEMORY_FREE", "SCRATCH_MEMORY_ASYNC_RECLAIM"},
	sdkMemoryAllocation: {"MEMORY_ALLOCATION_NONE", "MEMORY_ALLOCATION_ALLOCATE", "MEMORY_ALLOCATION_VMEM_ALLOCATE", "MEMORY_ALLOCATION_FREE", "MEMORY_ALLOCATION_VMEM_FREE"},
}

// sdkMarkerOp numbers a ROCTx function inside its SDK marker kind.
func sdkMarkerOp(d tracing.APIDomain, f tracing.MarkerFunction) int {
	name := f.String()
	for i, n := range fixedOperations[sdkKind(d)] {
		if n == name {
			return i
		}
	}
	return 0
}

// jsonBufferDomains are buffer_records' keys in order; empty kinds are
// domains rocprof-go does not record but rocprofv3 always lists.
var jsonBufferDomains = []struct {
	key  string
	kind tracing.Kind
}{
	{"kernel_dispatch", tracing.KindKernelDispatch}, {"hip_api", tracing.KindHIPAPI},
	{"hsa_api", tracing.KindHSAAPI}, {"marker_api", tracing.KindMarker}, {"rccl_api", tracing.KindRCCLAPI},
	{"memory_copy", tracing.KindMemoryCopy}, {"memory_allocation", tracing.KindMemoryAllocation},
	{"scratch_memory", tracing.KindScratchMemory}, {"rocdecode_api", 0}, {"rocjpeg_api", 0},
	{"pc_sample_host_trap", 0}, {"pc_sample_stochastic", 0},
}

// Write writes rocprofv3's results.json for the input: one element of
// "rocprofiler-sdk-tool" per process. Each buffer_records array is one
// filtered pass over the spool, so memory stays bounded; a process's PC
// samples are read whole (as the CSV writer reads them), once.
func Write(w io.Writer, in *model.Input) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	j := newJSONWriter(bw)
	j.obj().key("rocprofiler-sdk-tool").arr()
	err := in.OpenEach(func(p *model.Catalogue, r *model.SpoolView) error {
		writeJSONProcess(j, p, r)
		return j.err
	})
	if err != nil {
		return err
	}
	j.end().end()
	j.buf = append(j.buf, '\n')
	return j.flush()
}

func writeJSONProcess(j *jsonWriter, p *model.Catalogue, r *model.SpoolView) {
	o := p.Config
	info := &p.Info
	j.obj()
	j.key("metadata").obj()
	j.key("pid").i(int64(info.PID))
	j.key("init_time").u(p.Begin).key("fini_time").u(p.End)
	j.key("node").obj().key("hostname").s(info.Hostname).key("system_name").s("Linux").end()
	j.key("command").arr()
	for _, a := range info.Argv {
		j.s(a)
	}
	j.end()
	j.key("config").obj()
	keys := make([]string, 0, len(o.Metadata))
	for k := range o.Metadata {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch v := o.Metadata[k].(type) {
		case bool:
			j.key(k).b(v)
		case string:
			j.key(k).s(v)
		case int:
			j.key(k).i(int64(v))
		case []string:
			j.key(k).arr()
			for _, e := range v {
				j.s(e)
			}
			j.end()
		}
	}
	j.end()
	j.end() // metadata

	j.key("agents").arr()
	for i := range p.Agents {
		a := &p.Agents[i]
		j.obj().key("size").u(8 * tracing.AgentNumericFields)
		j.key("id").handle(a.NodeID())
		for f, name := range agentFieldNames {
			j.key(name).u(a.Values[f])
		}
		j.key("name").s(a.Name).key("vendor_name").s(a.VendorName)
		j.key("product_name").s(a.ProductName).key("model_name").s(a.ModelName)
		j.end()
	}
	j.end()

	j.key("counters").arr()
	for _, c := range p.Counters {
		j.obj().key("agent_id").handle(uint64(c.AgentNode)).key("id").handle(c.ID)
		j.key("is_constant").u(b2u(c.Meta.Constant)).key("is_derived").u(b2u(c.Meta.Derived)).key("name").s(c.Name)
		j.key("description").s(c.Meta.Description).key("block").s(c.Meta.Block).key("expression").s(c.Meta.Expression)
		j.key("dimension_ids").arr()
		for _, d := range c.Meta.DimensionIDs {
			j.u(d)
		}
		j.end().end()
	}
	j.end()

	pcs := readJSONPCSamples(p)
	writeJSONStrings(j, p, r, pcs)

	// code_objects, kernel_symbols and host_functions are indexed by id, as
	// rocprofv3 writes them (readers do data["kernel_symbols"][kernel_id]):
	// entry i describes id i, ids nothing describes (0 included) are
	// rocprofv3's empty entries, every field zero.
	j.key("code_objects").arr()
	byCodeObject := map[uint64]*tracing.CodeObject{}
	var lastCodeObject uint64
	for i := range p.CodeObjects {
		c := &p.CodeObjects[i]
		byCodeObject[c.CodeObjectID] = c
		lastCodeObject = max(lastCodeObject, c.CodeObjectID)
	}
	for id := uint64(0); id <= lastCodeObject; id++ {
		c := byCodeObject[id]
		if c == nil {
			c = &tracing.CodeObject{}
		}
		size := uint64(64)
		if c.CodeObjectID == 0 {
			size = 0
		}
		j.obj().key("size").u(size).key("code_object_id").u(c.CodeObjectID)
		j.key("agent_id").handle(uint64(c.AgentNode)).key("uri").s(string(c.URI))
		j.key("load_base").u(c.LoadBase).key("load_size").u(c.LoadSize).key("load_delta").u(c.LoadDelta)
		j.key("storage_type").u(uint64(c.StorageType)).end()
	}
	j.end()
	j.key("kernel_symbols").arr()
	entries := p.KernelEntries()
	var lastKernel uint64
	for _, id := range p.SymbolOrder {
		lastKernel = max(lastKernel, id)
	}
	for id := uint64(0); id <= lastKernel; id++ {
		s := p.Symbols[id]
		if s == nil {
			s = &model.KernelSymbol{}
		}
		size := uint64(64)
		if s.KernelID == 0 {
			size = 0
		}
		alignment := uint64(8)
		if s.KernelID == 0 {
			alignment = 0
		}
		j.obj().key("size").u(size).key("kernel_id").u(s.KernelID).key("code_object_id").u(s.CodeObjectID)
		j.key("kernel_name").s(s.Raw).key("kernel_object").u(s.KernelObject)
		j.key("kernarg_segment_size").u(uint64(s.KernargSize)).key("kernarg_segment_alignment").u(alignment)
		j.key("group_segment_size").u(uint64(s.GroupSegmentSize))
		j.key("private_segment_size").u(uint64(s.PrivateSegmentSize))
		j.key("sgpr_count").u(uint64(s.SGPRCount)).key("arch_vgpr_count").u(uint64(s.VGPRCount))
		j.key("accum_vgpr_count").u(uint64(s.AGPRCount))
		// rocprofiler-sdk's record ends with the descriptor's entry offset
		// and the entry's address (rocprofiler-compute's PC-sampling table
		// reads the offset); ROCpd's extdata writes the same KernelEntry.
		entry := entries[id]
		j.key("kernel_code_entry_byte_offset").i(entry.Offset)
		j.key("kernel_address").handle(entry.Address)
		j.key("formatted_kernel_name").s(s.Display).key("demangled_kernel_name").s(s.Demangled)
		j.key("truncated_kernel_name").s(s.Truncated).end()
	}
	j.end()
	writeJSONHostFunctions(j, p)

	if o.Stats || o.Summary || o.SummaryPerDomain || len(o.SummaryGroups) > 0 {
		var st model.RunStats
		r.Rewind()
		for r.Next() {
			st.AddRecord(p, r)
		}
		j.key("summary").arr()
		for d := model.Domain(0); d < model.NumDomains; d++ {
			ds := &st[d]
			if ds.Total.Count == 0 {
				continue
			}
			j.obj().key("domain").s(d.String()).key("stats").obj()
			writeJSONStat(j, &ds.Total)
			// rocprofv3 serialises its std::map of operations as cereal
			// does any map: a list of {"key", "value"}, by key.
			j.key("operations").arr()
			rows := ds.ByTotalDesc()
			sort.SliceStable(rows, func(a, b int) bool { return rows[a].Name < rows[b].Name })
			for _, row := range rows {
				j.obj().key("key").s(row.Name).key("value").obj()
				writeJSONStat(j, &row.Stat)
				j.end().end()
			}
			j.end().end().end()
		}
		j.end()
	}

	writeJSONCounterRecords(j, p, r)

	j.key("buffer_records").obj()
	var args model.ArgDecoder
	for _, bd := range jsonBufferDomains {
		j.key(bd.key).arr()
		if bd.key == "pc_sample_host_trap" || bd.key == "pc_sample_stochastic" {
			writeJSONPCSamples(j, p, pcs, bd.key == "pc_sample_stochastic")
		} else if bd.kind != 0 {
			r.Rewind()
			for r.Next() {
				if r.Kind() == bd.kind {
					writeJSONRecord(j, p, r, &args)
				}
			}
		}
		j.end()
	}
	j.end()
	j.end() // process
}

func writeJSONStat(j *jsonWriter, s *model.Stat) {
	j.key("count").u(s.Count).key("sum").u(s.Sum).key("sqr").f(s.Sqr)
	j.key("min").u(s.Min).key("max").u(s.Max).key("mean").f(s.Mean())
	j.key("stddev").f(s.StdDev()).key("variance").f(s.Variance())
}

func writeJSONStrings(j *jsonWriter, p *model.Catalogue, r *model.SpoolView, pcs *jsonPCSamples) {
	// Operation tables must cover every id the records use.
	maxOp := map[tracing.APIDomain]uint32{}
	r.Rewind()
	for r.Next() {
		if k := r.Kind(); k == tracing.KindHIPAPI || k == tracing.KindHSAAPI || k == tracing.KindRCCLAPI {
			a := r.APICall()
			if a.Function >= maxOp[a.Domain] {
				maxOp[a.Domain] = a.Function + 1
			}
		}
	}
	apiOps := map[int]tracing.APIDomain{}
	for d := tracing.DomainHIPRuntime; d <= tracing.DomainHSAFinalizeExt; d++ {
		apiOps[sdkKind(d)] = d
	}
	j.key("strings").obj()
	j.key("callback_records").arr().end()
	j.key("buffer_records").arr()
	for k, name := range sdkKindNames {
		j.obj().key("kind").s(name).key("operations").arr()
		if d, ok := apiOps[k]; ok {
			for id := uint32(0); id < maxOp[d]; id++ {
				j.s(p.FuncName(d, id))
			}
		} else {
			for _, op := range fixedOperations[k] {
				j.s(op)
			}
		}
		j.end().end()
	}
	j.end()
	j.key("marker_api").arr()
	r.Rewind()
	for r.Next() {
		if r.Kind() == tracing.KindMarker {
			m := r.Marker()
			if m.Function.CarriesMessage() {
				j.obj().key("key").u(p.CID(m.CorrelationID)).key("value").s(string(m.Message)).end()
			}
		}
	}
	j.end()
	// With --kernel-rename: the range messages renamed dispatches refer to
	// by correlation_id.external.
	j.key("correlation_id").obj().key("external").arr()
	for _, e := range p.Renamer.RenameStrings() {
		j.obj().key("key").u(p.CID(e.ID)).key("value").s(e.Msg).end()
	}
	j.end().end()
	j.key("counters").obj().key("dimension_ids").arr().end().end()
	j.key("pc_sample_instructions").arr()
	for _, t := range pcs.instructions {
		j.s(t)
	}
	j.end().key("pc_sample_comments").arr()
	for _, c := range pcs.comments {
		j.s(c)
	}
	j.end()
	att, snapshots := threadTraceNames(p.Config.ThreadTraceFiles[p.Info.PID])
	j.key("att_filenames").arr()
	for _, n := range att {
		j.s(n)
	}
	j.end().key("code_object_snapshot_filenames").arr()
	for _, n := range snapshots {
		j.s(n)
	}
	j.end()
	j.end()
}

// threadTraceNames sorts a process's thread-trace files as rocprofv3's JSON
// lists them: the raw traces (.att) by name, and the code-object snapshots
// indexed by code object id ("" for ids without one).
func threadTraceNames(files []string) (att, snapshots []string) {
	byID := map[uint64]string{}
	var last uint64
	for _, f := range files {
		switch {
		case strings.HasSuffix(f, ".att"):
			att = append(att, f)
		case strings.HasSuffix(f, ".out"):
			i := strings.LastIndex(f, "_code_object_id_")
			if i < 0 {
				continue
			}
			id, err := strconv.ParseUint(strings.TrimSuffix(f[i+len("_code_object_id_"):], ".out"), 10, 64)
			if err != nil {
				continue
			}
			byID[id] = f
			last = max(last, id)
		}
	}
	sort.Strings(att)
	if len(byID) > 0 {
		snapshots = make([]string, last+1)
		for id, f := range byID {
			snapshots[id] = f
		}
	}
	return att, snapshots
}

func writeJSONCorrelation(j *jsonWriter, internal, external uint64) {
	j.key("correlation_id").obj().key("internal").u(internal).key("external").u(external).key("ancestor").u(0).end()
}

// writeJSONRecord writes the reader's current record as the SDK's buffer
// record. A dispatch's kernel stays its kernel_id; under --kernel-rename its
// correlation_id.external names the enclosing range (as in rocprofv3). A HIP
// call carries its recorded arguments as rocprofv3's HIP "_EXT" records do:
// "args", a list of {type, name, value}.
func writeJSONRecord(j *jsonWriter, p *model.Catalogue, r *model.SpoolView, args *model.ArgDecoder) {
	j.obj()
	switch r.Kind() {
	case tracing.KindHIPAPI, tracing.KindHSAAPI, tracing.KindRCCLAPI:
		a := r.APICall()
		j.key("size").u(48).key("kind").i(int64(sdkKind(a.Domain))).key("operation").u(uint64(a.Function))
		writeJSONCorrelation(j, p.CID(a.CorrelationID), 0)
		j.key("start_timestamp").u(a.Start).key("end_timestamp").u(a.End).key("thread_id").u(uint64(a.TID))
		if list := args.Decode(&a); list != nil {
			j.key("args").arr()
			for i := range list {
				j.obj().key("type").s(list[i].Type).key("name").s(list[i].Name).key("value").s(list[i].Value).end()
			}
			j.end()
		}
	case tracing.KindMarker:
		m := r.Marker()
		j.key("size").u(48).key("kind").i(int64(sdkKind(m.Domain))).key("operation").i(int64(sdkMarkerOp(m.Domain, m.Function)))
		writeJSONCorrelation(j, p.CID(m.CorrelationID), 0)
		j.key("start_timestamp").u(m.Start).key("end_timestamp").u(m.End).key("thread_id").u(uint64(m.TID))
	case tracing.KindKernelDispatch:
		d := r.KernelDispatch()
		j.key("size").u(120).key("kind").i(sdkKernelDispatch).key("operation").i(2)
		writeJSONCorrelation(j, p.CID(d.CorrelationID), p.CID(p.Renamer.External(d.TID, d.CorrelationID)))
		j.key("start_timestamp").u(d.Start).key("end_timestamp").u(d.End).key("thread_id").u(uint64(d.TID))
		j.key("dispatch_info")
		writeJSONDispatchInfo(j, &d)
		j.key("stream_id").handle(d.StreamID)
	case tracing.KindMemoryCopy:
		c := r.MemoryCopy()
		j.key("size").u(80).key("kind").i(sdkMemoryCopy).key("operation").u(uint64(c.Direction))
		writeJSONCorrelation(j, p.CID(c.CorrelationID), 0)
		j.key("start_timestamp").u(c.Start).key("end_timestamp").u(c.End).key("thread_id").u(uint64(c.TID))
		j.key("dst_agent_id").handle(uint64(c.DstAgentNode)).key("src_agent_id").handle(uint64(c.SrcAgentNode))
		j.key("bytes").u(c.Bytes).key("dst_address").handle(c.DstAddress).key("src_address").handle(c.SrcAddress)
		j.key("stream_id").handle(c.StreamID)
	case tracing.KindMemoryAllocation:
		a := r.MemoryAllocation()
		j.key("size").u(64).key("kind").i(sdkMemoryAllocation).key("operation").u(uint64(a.Operation))
		writeJSONCorrelation(j, p.CID(a.CorrelationID), 0)
		j.key("start_timestamp").u(a.Start).key("end_timestamp").u(a.End).key("thread_id").u(uint64(a.TID))
		// rocprofv3 writes the address as a hex string (as_hex(address, 16)).
		j.key("agent_id").handle(uint64(a.AgentNode)).key("address").s(hexAddress(a.Address))
		j.key("allocation_size").u(a.Size)
		j.key("stream_id").handle(0)
	case tracing.KindScratchMemory:
		s := r.ScratchMemory()
		j.key("size").u(64).key("kind").i(sdkScratchMemory).key("operation").u(uint64(s.Operation))
		writeJSONCorrelation(j, p.CID(s.CorrelationID), 0)
		j.key("start_timestamp").u(s.Start).key("end_timestamp").u(s.End).key("thread_id").u(uint64(s.TID))
		j.key("agent_id").handle(uint64(s.AgentNode)).key("queue_id").handle(s.QueueID)
		j.key("flags").u(uint64(s.Flags)).key("allocation_size").u(s.Size)
	}
	j.end()
}

func writeJSONDispatchInfo(j *jsonWriter, d *tracing.KernelDispatch) {
	j.obj().key("size").u(88).key("agent_id").handle(uint64(d.AgentNode)).key("queue_id").handle(d.QueueID)
	j.key("kernel_id").u(d.KernelID).key("dispatch_id").u(d.DispatchID)
	j.key("private_segment_size").u(uint64(d.PrivateSegmentSize)).key("group_segment_size").u(uint64(d.GroupSegmentSize))
	j.key("workgroup_size").obj().key("x").u(uint64(d.Workgroup[0])).key("y").u(uint64(d.Workgroup[1])).key("z").u(uint64(d.Workgroup[2])).end()
	j.key("grid_size").obj().key("x").u(uint64(d.Grid[0])).key("y").u(uint64(d.Grid[1])).key("z").u(uint64(d.Grid[2])).end()
	j.end()
}

// writeJSONCounterRecords writes callback_records.counter_collection: one
// element per dispatch with its per-instance values, in the order the
// dispatches' samples first appear in the spool (their completion order, as
// rocprofv3 lists them; rocprofiler-compute numbers dispatches by position).
// The shim writes a dispatch's samples together, but they can still come
// apart in the spool: when its thread's chunk fills in the middle, the rest
// goes to the thread's next chunk, and another completion thread's chunk
// may be read in between. Such a dispatch is written once, whole, when its
// last run has been read; the dispatches that follow its first run are held
// until then, so the order stays (every other dispatch streams through).
func writeJSONCounterRecords(j *jsonWriter, p *model.Catalogue, r *model.SpoolView) {
	j.key("callback_records").obj().key("counter_collection").arr()
	if p.Counts[model.DomCounter] > 0 {
		dispatches := map[uint64]tracing.KernelDispatch{}
		r.Rewind()
		for r.Next() {
			if r.Kind() == tracing.KindKernelDispatch {
				if d := r.KernelDispatch(); p.IsSampled(d.DispatchID) {
					dispatches[d.DispatchID] = d
				}
			}
		}
		// Which dispatches come in several runs, and their last run.
		lastRun := map[uint64]int{}
		runs := map[uint64]int{}
		run, prev, started := -1, uint64(0), false
		r.Rewind()
		for r.Next() {
			if r.Kind() != tracing.KindCounterSample {
				continue
			}
			if id := r.CounterSample().DispatchID; !started || id != prev {
				run, prev, started = run+1, id, true
				lastRun[id] = run
				runs[id]++
			}
		}
		open := func(id uint64) {
			d := dispatches[id]
			j.obj().key("dispatch_data").obj().key("size").u(120)
			writeJSONCorrelation(j, p.CID(d.CorrelationID), p.CID(p.Renamer.External(d.TID, d.CorrelationID)))
			j.key("dispatch_info")
			writeJSONDispatchInfo(j, &d)
			j.key("start_timestamp").u(d.Start).key("end_timestamp").u(d.End).end()
			j.key("records").arr()
		}
		sample := func(c *tracing.CounterSample) {
			j.obj().key("counter_id").handle(p.CounterID(c)).key("value").f(c.Value).end()
		}
		closeGroup := func(id uint64) {
			j.end() // records
			d := dispatches[id]
			sym := p.Symbols[d.KernelID]
			j.key("thread_id").u(uint64(d.TID)).key("stream_id").handle(d.StreamID)
			if sym != nil {
				j.key("arch_vgpr_count").u(uint64(sym.VGPRCount)).key("accum_vgpr_count").u(uint64(sym.AGPRCount))
				j.key("sgpr_count").u(uint64(sym.SGPRCount)).key("lds_block_size_v").u(uint64((sym.GroupSegmentSize + 511) / 512 * 512))
			}
			j.end()
		}
		// Held back: the samples of the dispatches in queue (first-run
		// order), written when the front one's last run has been read.
		held := map[uint64][]tracing.CounterSample{}
		var queue []uint64
		queued := map[uint64]bool{}
		complete := map[uint64]bool{}
		streaming := false
		endRun := func(id uint64, run int) {
			if streaming {
				closeGroup(id)
				streaming = false
				return
			}
			if run != lastRun[id] {
				return
			}
			complete[id] = true
			for len(queue) > 0 && complete[queue[0]] {
				front := queue[0]
				queue = queue[1:]
				open(front)
				for i := range held[front] {
					sample(&held[front][i])
				}
				closeGroup(front)
				delete(held, front)
				delete(complete, front)
			}
		}
		r.Rewind()
		run, started = -1, false
		for r.Next() {
			if r.Kind() != tracing.KindCounterSample {
				continue
			}
			c := r.CounterSample()
			if !started || c.DispatchID != prev {
				if started {
					endRun(prev, run)
				}
				run, prev, started = run+1, c.DispatchID, true
				if runs[c.DispatchID] == 1 && len(queue) == 0 {
					streaming = true
					open(c.DispatchID)
				} else if !queued[c.DispatchID] {
					queued[c.DispatchID] = true
					queue = append(queue, c.DispatchID)
				}
			}
			if streaming {
				sample(&c)
			} else {
				held[c.DispatchID] = append(held[c.DispatchID], c)
			}
		}
		if started {
			endRun(prev, run)
		}
	}
	j.end().end()
}

// hexAddress is rocprofv3's as_hex(address, 16): "0x" and at least 16
// zero-padded hex digits.
func hexAddress(a uint64) string {
	return fmt.Sprintf("0x%016x", a)
}

// writeJSONHostFunctions writes rocprofv3's host_functions: one entry per
// kernel host stub HIP registered, numbered 1.. in registration order (entry
// 0 empty, as for kernel_symbols), with the kernel symbol of the same name
// (its id and code object) and its names in the forms kernel_symbols has.
// The registration's launch bounds (thread ids, dims) are not recorded:
// HIP passes them as null for every kernel it compiles.
func writeJSONHostFunctions(j *jsonWriter, p *model.Catalogue) {
	byName := map[string]*model.KernelSymbol{}
	for _, id := range p.SymbolOrder {
		if s := p.Symbols[id]; s != nil {
			byName[strings.TrimSuffix(s.Raw, ".kd")] = s
		}
	}
	dim := func(key string) { j.key(key).obj().key("x").u(0).key("y").u(0).key("z").u(0).end() }
	j.key("host_functions").arr()
	for i := 0; i <= len(p.HostFunctions); i++ {
		var h model.HostFunction
		size, id := uint64(0), uint64(0)
		if i > 0 {
			h, size, id = p.HostFunctions[i-1], 96, uint64(i)
		}
		k := byName[h.Device]
		if k == nil {
			k = &model.KernelSymbol{}
		}
		j.obj().key("size").u(size).key("host_function_id").u(id).key("kernel_id").u(k.KernelID)
		j.key("code_object_id").u(k.CodeObjectID).key("host_function").handle(h.Address).key("modules").handle(0)
		j.key("device_function").s(h.Device).key("thread_limit").u(0)
		dim("thread_ids")
		dim("block_ids")
		dim("block_dims")
		dim("grid_dims")
		j.key("workgroup_size").u(0)
		display, demangled, truncated := "", "", ""
		if h.Device != "" {
			display = kernelname.Format(h.Device, p.Config.MangledKernels, p.Config.TruncateKernels)
			demangled = kernelname.Format(h.Device, false, false)
			truncated = kernelname.Format(h.Device, false, true)
		}
		j.key("formatted_host_function_name").s(display).key("demangled_host_function_name").s(demangled)
		j.key("truncated_host_function_name").s(truncated).end()
	}
	j.end()
}

// b2u is rocprofv3's 0/1 for a flag.
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
