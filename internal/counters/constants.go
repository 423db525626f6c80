package counters

import (
	"strconv"
	"strings"

	"github.com/rocprof-go/rocprof-go/internal/aql"
)

// Properties are agent properties by KFD topology key.
type Properties map[string]float64

// ConstantNames are the agent-property constants every architecture lists
// before its counters (rocprofiler-sdk's recognised KFD property keys).
var ConstantNames = []string{
	"cpu_cores_count", "simd_count", "mem_banks_count", "caches_count", "io_links_count",
	"cpu_core_id_base", "simd_id_base", "max_waves_per_simd", "lds_size_in_kb", "gds_size_in_kb",
	"num_gws", "wave_front_size", "array_count", "simd_arrays_per_engine", "cu_per_simd_array",
	"simd_per_cu", "max_slots_scratch_cu", "gfx_target_version", "vendor_id", "device_id",
	"location_id", "domain", "drm_render_minor", "hive_id", "num_sdma_engines",
	"num_sdma_xgmi_engines", "num_sdma_queues_per_engine", "num_cp_queues", "max_engine_clk_ccompute",
}

// GfxTargetVersion is KFD's gfx_target_version for a gfxip name
// (major·10000 + minor·100 + stepping; the last two characters are hex).
func GfxTargetVersion(gfxip string) int {
	s := strings.TrimPrefix(gfxip, "gfx")
	if len(s) < 3 {
		return 0
	}
	major, err1 := strconv.Atoi(s[:len(s)-2])
	minor, err2 := strconv.ParseUint(s[len(s)-2:len(s)-1], 16, 8)
	step, err3 := strconv.ParseUint(s[len(s)-1:], 16, 8)
	if err1 != nil || err2 != nil || err3 != nil {
		return 0
	}
	return major*10000 + int(minor)*100 + int(step)
}

// DeriveProperties fills the properties a device description implies; values
// in given win. Real runs pass the KFD topology values; the derived ones make
// offline planning and listing (rocprof-go avail --arch) meaningful.
func DeriveProperties(dev *aql.Device, given Properties) Properties {
	p := Properties{}
	simdPerCU, wave, waves := 4.0, 64.0, 10.0
	if dev.Family != aql.GFX9 {
		simdPerCU, wave, waves = 2, 32, 16
	} else if GfxTargetVersion(dev.GfxIP) >= 90010 {
		waves = 8
	}
	p["simd_per_cu"] = simdPerCU
	p["simd_count"] = simdPerCU * float64(dev.CU)
	p["wave_front_size"] = wave
	p["max_waves_per_simd"] = waves
	p["array_count"] = float64(dev.SE * dev.SAPerSE)
	p["simd_arrays_per_engine"] = float64(dev.SAPerSE)
	p["cu_per_simd_array"] = float64(dev.CU / (dev.SE * dev.SAPerSE))
	p["lds_size_in_kb"] = 64
	p["vendor_id"] = 0x1002
	p["gfx_target_version"] = float64(GfxTargetVersion(dev.GfxIP))
	for k, v := range given {
		p[k] = v
	}
	return p
}
