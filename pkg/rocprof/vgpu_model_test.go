package rocprof_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/counters"
)

// The virtual GPU's default kernel duration model (docs/virtual-gpu.md,
// "Clocks and the kernel duration model"): a fixed part plus a cost per wave.
const (
	vgpuKernelBaseNs = 2000
	vgpuKernelWaveNs = 8
)

// vgpuShape is an emulated agent as the virtual GPU's counter model sees
// it, read from the run's agent_info.csv (what the virtual GPU's KFD
// topology reported) and the agent's counter database (block instances).
type vgpuShape struct {
	arch                        string
	node                        string
	se, cu, xcc, clockMHz, wave int
	db                          *counters.DB
}

// vgpuGPU reads the one GPU of a run's agent_info.csv.
func vgpuGPU(t *testing.T, dir string) vgpuShape {
	t.Helper()
	agents := readTable(t, dir, "agent_info.csv")
	var gpus [][]string
	for _, r := range agents.rows {
		if agents.get(r, "Agent_Type") == "GPU" {
			gpus = append(gpus, r)
		}
	}
	require.Len(t, gpus, 1, "one GPU")
	r := gpus[0]
	num := func(col string) int { return atoi(t, agents.get(r, col)) }
	s := vgpuShape{arch: agents.get(r, "Name"), node: agents.get(r, "Node_Id"), se: num("Num_Shader_Banks"),
		cu: num("Cu_Count"), xcc: num("Num_Xcc"), clockMHz: num("Max_Engine_Clk_Fcompute"), wave: num("Wave_Front_Size")}
	require.Equal(t, 1, s.xcc, "the restated model covers one XCC")
	dev, err := counters.DeviceFromProperties(s.arch, map[string]uint64{
		"num_xcc":                uint64(s.xcc),
		"array_count":            uint64(num("Array_Count")),
		"simd_arrays_per_engine": uint64(num("Simd_Arrays_Per_Engine")),
		"simd_count":             uint64(num("Simd_Count")),
		"simd_per_cu":            uint64(num("Simd_Per_Cu")),
	})
	require.NoError(t, err)
	s.db, err = counters.Load(dev)
	require.NoError(t, err)
	return s
}

// vgpuDispatch is one dispatch as the model sees it.
type vgpuDispatch struct {
	grid, wg [3]int
}

func (d vgpuDispatch) workgroups() int {
	n := 1
	for i := range d.grid {
		n *= (d.grid[i] + d.wg[i] - 1) / d.wg[i]
	}
	return n
}

func (s vgpuShape) wavesPerGroup(d vgpuDispatch) int {
	return (d.wg[0]*d.wg[1]*d.wg[2] + s.wave - 1) / s.wave
}

func (s vgpuShape) waves(d vgpuDispatch) int { return d.workgroups() * s.wavesPerGroup(d) }

// share splits total over parts, the first total%parts getting one more.
func share(total, parts, i int) int {
	v := total / parts
	if i < total%parts {
		v++
	}
	return v
}

// wavesOnSE: workgroup i runs on SE (i mod SEs).
func (s vgpuShape) wavesOnSE(d vgpuDispatch, se int) int {
	return share(d.workgroups(), s.se, se) * s.wavesPerGroup(d)
}

func (s vgpuShape) durationNs(d vgpuDispatch) int {
	return vgpuKernelBaseNs + vgpuKernelWaveNs*s.waves(d)
}

func (s vgpuShape) cycles(d vgpuDispatch) uint64 {
	return uint64(s.durationNs(d)) * uint64(s.clockMHz) / 1000
}

// value restates docs/virtual-gpu.md's counter model ("Counter model", the
// same formulas as vgpu/src/counter_model.c): what one dispatch adds to a
// hardware counter at shader engine se / block instance inst (kernels
// without LDS).
func (s vgpuShape) value(t *testing.T, counter string, d vgpuDispatch, se, inst int) uint64 {
	t.Helper()
	wgSE := share(d.workgroups(), s.se, se)
	wavesSE := uint64(s.wavesOnSE(d, se))
	cycles := s.cycles(d)
	tcc := s.instances(t, "TCC_HIT")
	req := share(4*s.waves(d), tcc, inst) // 4 L2 requests per wave
	miss := (req + 3) / 4                 // 1 in 4 misses, rounded up
	switch counter {
	case "SQ_WAVES", "SQ_LEVEL_WAVES", "SPI_CSN_WAVE":
		return wavesSE
	case "SQ_INSTS_VALU":
		return 16 * wavesSE
	case "SQ_INSTS_SALU":
		return 8 * wavesSE
	case "SQ_INSTS_SMEM", "SQ_INSTS_VMEM_RD":
		return 2 * wavesSE
	case "SQ_INSTS_VMEM_WR", "SQ_INSTS_BRANCH":
		return wavesSE
	case "SQ_INSTS_VMEM":
		return 3 * wavesSE
	case "SQ_INSTS":
		return 30 * wavesSE
	case "SQ_BUSY_CYCLES":
		if wgSE > 0 {
			return cycles
		}
		return 0
	case "SQ_BUSY_CU_CYCLES":
		return cycles * uint64(min(wgSE, s.cu/s.se))
	case "SQ_WAVE_CYCLES":
		return wavesSE * cycles
	case "GRBM_COUNT":
		return cycles + 1000
	case "GRBM_GUI_ACTIVE", "GRBM_CP_BUSY", "GRBM_SPI_BUSY", "CPC_CPC_STAT_BUSY", "SPI_CSN_BUSY":
		return cycles
	case "TCC_REQ":
		return uint64(req)
	case "TCC_HIT":
		return uint64(req - miss)
	case "TCC_MISS", "TCC_EA_RDREQ":
		return uint64(miss)
	case "TCC_WRITE", "TCC_EA_WRREQ":
		return uint64(req / 4)
	case "TCC_READ":
		return uint64(req - req/4)
	}
	t.Fatalf("%s is not in the restated counter model", counter)
	return 0
}

// instances is the number of dimension instances of a hardware counter on
// this agent, which must vary along one dimension at most (shader engine
// or block instance) for the model's (se, inst) coordinates.
func (s vgpuShape) instances(t *testing.T, counter string) int {
	_, n := s.dimension(t, counter)
	return n
}

// dimension is the one dimension a hardware counter's instances run along
// and its size.
func (s vgpuShape) dimension(t *testing.T, counter string) (counters.Dimension, int) {
	t.Helper()
	c, ok := s.db.Lookup(counter)
	require.True(t, ok, "%s on %s", counter, s.arch)
	require.Equal(t, counters.Basic, c.Kind, counter)
	dims, err := s.db.Dimensions(c)
	require.NoError(t, err)
	dim, n := counters.Dimension(0), 1
	for _, e := range dims {
		if e.Size > 1 {
			require.Equal(t, 1, n, "%s varies along more than one dimension: %v", counter, dims)
			dim, n = e.Dim, e.Size
		}
	}
	return dim, n
}

// perInstance is the model's value of a hardware counter at each of its
// instances, in instance order.
func (s vgpuShape) perInstance(t *testing.T, counter string, d vgpuDispatch) []uint64 {
	dim, n := s.dimension(t, counter)
	out := make([]uint64, n)
	for i := range out {
		if n > 1 && dim == counters.DimShaderEngine {
			out[i] = s.value(t, counter, d, i, 0)
		} else {
			require.True(t, n == 1 || dim == counters.DimInstance, "%s along %v", counter, dim)
			out[i] = s.value(t, counter, d, 0, i)
		}
	}
	return out
}

// csvValue is how counter_collection.csv prints a value.
func csvValue(v float64) string { return strconv.FormatFloat(v, 'f', 6, 64) }

func sum(vs []uint64) uint64 {
	var n uint64
	for _, v := range vs {
		n += v
	}
	return n
}

func maxOf(vs []uint64) uint64 {
	var n uint64
	for _, v := range vs {
		n = max(n, v)
	}
	return n
}

// derived is the model's value of the derived counters the tests use,
// evaluated as their gfx9 definitions say (rocprofv3's expression rules).
func (s vgpuShape) derived(t *testing.T, counter string, d vgpuDispatch) float64 {
	t.Helper()
	c, ok := s.db.Lookup(counter)
	require.True(t, ok, counter)
	switch counter {
	case "GPU_UTIL": // 100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)
		require.Equal(t, "100*reduce(GRBM_GUI_ACTIVE,max)/reduce(GRBM_COUNT,max)", c.Expression)
		return 100 * float64(maxOf(s.perInstance(t, "GRBM_GUI_ACTIVE", d))) / float64(maxOf(s.perInstance(t, "GRBM_COUNT", d)))
	case "VALUInsts": // reduce(SQ_INSTS_VALU,sum)/reduce(SQ_WAVES,sum)
		require.Equal(t, "reduce(SQ_INSTS_VALU,sum)/reduce(SQ_WAVES,sum)", c.Expression)
		return float64(sum(s.perInstance(t, "SQ_INSTS_VALU", d))) / float64(sum(s.perInstance(t, "SQ_WAVES", d)))
	case "Wavefronts": // reduce(SQ_WAVES,sum)
		require.Equal(t, "reduce(SQ_WAVES,sum)", c.Expression)
		return float64(sum(s.perInstance(t, "SQ_WAVES", d)))
	}
	t.Fatalf("derived counter %s is not restated", counter)
	return 0
}

func (d vgpuDispatch) String() string { return fmt.Sprintf("grid %v workgroup %v", d.grid, d.wg) }
