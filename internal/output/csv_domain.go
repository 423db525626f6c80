package output

import "github.com/rocprof-go/rocprof-go/internal/tracing"

// csvDomain is a CSV output domain, numbered in the order rocprofv3 writes
// the domains' files.
type csvDomain int

const (
	csvDomKernel csvDomain = iota
	csvDomHSA
	csvDomHIP
	csvDomCopy
	csvDomAlloc
	csvDomMarker
	csvDomCounter
	csvDomScratch
	csvDomainCount
)

var csvDomains = [csvDomainCount]struct {
	name  string // rocprofv3's domain column name (domain_stats.csv)
	file  string // CSV output name
	stats string // stats output name; "" when rocprofv3 writes none
}{
	csvDomKernel:  {"KERNEL_DISPATCH", "kernel_trace", "kernel_stats"},
	csvDomHSA:     {"HSA_API", "hsa_api_trace", "hsa_api_stats"},
	csvDomHIP:     {"HIP_API", "hip_api_trace", "hip_api_stats"},
	csvDomCopy:    {"MEMORY_COPY", "memory_copy_trace", "memory_copy_stats"},
	csvDomAlloc:   {"MEMORY_ALLOCATION", "memory_allocation_trace", "memory_allocation_stats"},
	csvDomMarker:  {"MARKER_API", "marker_api_trace", "marker_api_stats"},
	csvDomCounter: {"COUNTER_COLLECTION", "counter_collection", ""},
	csvDomScratch: {"SCRATCH_MEMORY", "scratch_memory_trace", "scratch_memory_stats"},
}

// csvDomainOf maps a record kind to its CSV domain (-1: metadata record).
func csvDomainOf(k tracing.Kind) csvDomain {
	switch k {
	case tracing.KindKernelDispatch:
		return csvDomKernel
	case tracing.KindHSAAPI:
		return csvDomHSA
	case tracing.KindHIPAPI:
		return csvDomHIP
	case tracing.KindMemoryCopy:
		return csvDomCopy
	case tracing.KindMemoryAllocation:
		return csvDomAlloc
	case tracing.KindMarker:
		return csvDomMarker
	case tracing.KindCounterSample:
		return csvDomCounter
	case tracing.KindScratchMemory:
		return csvDomScratch
	}
	return -1
}

// csvHeaders are the column rows, names exactly as rocprofv3 prints them.
var csvHeaders = [csvDomainCount][]string{
	csvDomKernel: {"Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
		"Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
		"LDS_Block_Size", "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count",
		"Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X",
		"Grid_Size_Y", "Grid_Size_Z"},
	csvDomHSA: csvAPIColumns,
	csvDomHIP: csvAPIColumns,
	csvDomCopy: {"Kind", "Direction", "Stream_Id", "Source_Agent_Id", "Destination_Agent_Id",
		"Correlation_Id", "Start_Timestamp", "End_Timestamp"},
	csvDomAlloc: {"Kind", "Operation", "Agent_Id", "Allocation_Size", "Address",
		"Correlation_Id", "Start_Timestamp", "End_Timestamp"},
	csvDomMarker: csvAPIColumns,
	csvDomCounter: {"Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id",
		"Thread_Id", "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size",
		"LDS_Block_Size", "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count",
		"Counter_Name", "Counter_Value", "Start_Timestamp", "End_Timestamp"},
	csvDomScratch: {"Kind", "Operation", "Agent_Id", "Queue_Id", "Thread_Id", "Alloc_Flags",
		"Start_Timestamp", "End_Timestamp", "Allocation_Size"},
}

var csvAPIColumns = []string{"Domain", "Function", "Process_Id", "Thread_Id", "Correlation_Id",
	"Start_Timestamp", "End_Timestamp"}

var csvStatsColumns = []string{"Name", "Calls", "TotalDurationNs", "AverageNs", "Percentage",
	"MinNs", "MaxNs", "StdDev"}

var csvAgentColumns = []string{"Node_Id", "Logical_Node_Id", "Agent_Type", "Cpu_Cores_Count",
	"Simd_Count", "Cpu_Core_Id_Base", "Simd_Id_Base", "Max_Waves_Per_Simd", "Lds_Size_In_Kb",
	"Gds_Size_In_Kb", "Num_Gws", "Wave_Front_Size", "Num_Xcc", "Cu_Count", "Array_Count",
	"Num_Shader_Banks", "Simd_Arrays_Per_Engine", "Cu_Per_Simd_Array", "Simd_Per_Cu",
	"Max_Slots_Scratch_Cu", "Gfx_Target_Version", "Vendor_Id", "Device_Id", "Location_Id",
	"Domain", "Drm_Render_Minor", "Num_Sdma_Engines", "Num_Sdma_Xgmi_Engines",
	"Num_Sdma_Queues_Per_Engine", "Num_Cp_Queues", "Max_Engine_Clk_Ccompute",
	"Max_Engine_Clk_Fcompute", "Sdma_Fw_Version", "Fw_Version", "Capability", "Cu_Per_Engine",
	"Max_Waves_Per_Cu", "Family_Id", "Workgroup_Max_Size", "Grid_Max_Size", "Local_Mem_Size",
	"Hive_Id", "Gpu_Id", "Workgroup_Max_Dim_X", "Workgroup_Max_Dim_Y", "Workgroup_Max_Dim_Z",
	"Grid_Max_Dim_X", "Grid_Max_Dim_Y", "Grid_Max_Dim_Z", "Name", "Vendor_Name",
	"Product_Name", "Model_Name"}
