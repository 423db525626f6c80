package csv

import "github.com/rocprof-go/rocprof-go/internal/output/model"

// Headers are the column rows, names exactly as rocprofv3 prints them.
var Headers = [model.NumDomains][]string{
	model.DomKernel: {"Kind", "Agent_Id", "Queue_Id", "Stream_Id", "Thread_Id", "Dispatch_Id",
		"Kernel_Id", "Kernel_Name", "Correlation_Id", "Start_Timestamp", "End_Timestamp",
		"LDS_Block_Size", "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count",
		"Workgroup_Size_X", "Workgroup_Size_Y", "Workgroup_Size_Z", "Grid_Size_X",
		"Grid_Size_Y", "Grid_Size_Z"},
	model.DomHSA:  csvAPIColumns,
	model.DomHIP:  csvAPIColumns,
	model.DomRCCL: csvAPIColumns,
	model.DomCopy: {"Kind", "Direction", "Stream_Id", "Source_Agent_Id", "Destination_Agent_Id",
		"Correlation_Id", "Start_Timestamp", "End_Timestamp"},
	model.DomAlloc: {"Kind", "Operation", "Agent_Id", "Allocation_Size", "Address",
		"Correlation_Id", "Start_Timestamp", "End_Timestamp"},
	model.DomMarker: csvAPIColumns,
	model.DomCounter: {"Correlation_Id", "Dispatch_Id", "Agent_Id", "Queue_Id", "Process_Id",
		"Thread_Id", "Grid_Size", "Kernel_Id", "Kernel_Name", "Workgroup_Size",
		"LDS_Block_Size", "Scratch_Size", "VGPR_Count", "Accum_VGPR_Count", "SGPR_Count",
		"Counter_Name", "Counter_Value", "Start_Timestamp", "End_Timestamp"},
	model.DomScratch: {"Kind", "Operation", "Agent_Id", "Queue_Id", "Thread_Id", "Alloc_Flags",
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
