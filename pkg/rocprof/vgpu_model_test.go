package rocprof_test

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/aql"
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
// se and cu count every XCC, as KFD reports them.
type vgpuShape struct {
	arch                        string
	node                        string
	se, cu, xcc, clockMHz, wave int
	db                          *counters.DB
	dev                         *aql.Device // the agent as the shim describes it to the packet builder
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
	require.Positive(t, s.xcc, "Num_Xcc")
	require.Zero(t, s.se%s.xcc, "Num_Shader_Banks %d counts every one of the %d XCCs", s.se, s.xcc)
	dev, err := counters.DeviceFromProperties(s.arch, map[string]uint64{
		"num_xcc":                uint64(s.xcc),
		"array_count":            uint64(num("Array_Count")),
		"simd_arrays_per_engine": uint64(num("Simd_Arrays_Per_Engine")),
		"simd_count":             uint64(num("Simd_Count")),
		"simd_per_cu":            uint64(num("Simd_Per_Cu")),
	})
	require.NoError(t, err)
	s.dev = dev
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

// seOfXCC is the shader engines of one XCC.
func (s vgpuShape) seOfXCC() int { return s.se / s.xcc }

// groupsOnXCC: workgroup i runs on XCC (i mod XCCs), then on SE
// ((i div XCCs) mod SEs of an XCC) inside it.
func (s vgpuShape) groupsOnXCC(d vgpuDispatch, xcc int) int { return share(d.workgroups(), s.xcc, xcc) }

func (s vgpuShape) wavesOnXCC(d vgpuDispatch, xcc int) int {
	return s.groupsOnXCC(d, xcc) * s.wavesPerGroup(d)
}

// wavesOnSE is the waves of shader engine se of XCC 0.
func (s vgpuShape) wavesOnSE(d vgpuDispatch, se int) int {
	return share(s.groupsOnXCC(d, 0), s.seOfXCC(), se) * s.wavesPerGroup(d)
}

func (s vgpuShape) durationNs(d vgpuDispatch) int {
	return vgpuKernelBaseNs + vgpuKernelWaveNs*s.waves(d)
}

func (s vgpuShape) cycles(d vgpuDispatch) uint64 {
	return uint64(s.durationNs(d)) * uint64(s.clockMHz) / 1000
}

// value restates docs/virtual-gpu.md's counter model ("Counter model", the
// same formulas as vgpu/src/counter_model.c): what one dispatch adds to a
// hardware counter at XCC xcc, shader engine se (of that XCC) and block
// instance inst (kernels without LDS). Each XCC counts its own workgroups;
// the dispatch's cycles are every XCC's.
func (s vgpuShape) value(t *testing.T, counter string, d vgpuDispatch, xcc, se, inst int) uint64 {
	t.Helper()
	wgSE := share(s.groupsOnXCC(d, xcc), s.seOfXCC(), se)
	wavesSE := uint64(wgSE * s.wavesPerGroup(d))
	cycles := s.cycles(d)
	tcc := s.extent(t, "TCC_HIT", counters.DimInstance)
	req := share(4*s.wavesOnXCC(d, xcc), tcc, inst) // 4 L2 requests per wave
	miss := (req + 3) / 4                           // 1 in 4 misses, rounded up
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
		return cycles * uint64(min(wgSE, (s.cu/s.xcc)/s.seOfXCC()))
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
	case "TA_TA_BUSY", "TCP_TCC_READ_REQ", "TD_TD_BUSY":
		return 0 // the model's "anything else": read at every instance, counting nothing
	}
	t.Fatalf("%s is not in the restated counter model", counter)
	return 0
}

// dims is a hardware counter's dimensions on this agent, in the order of
// its instances (the last varies fastest).
func (s vgpuShape) dims(t *testing.T, counter string) []counters.DimExtent {
	t.Helper()
	c, ok := s.db.Lookup(counter)
	require.True(t, ok, "%s on %s", counter, s.arch)
	require.Equal(t, counters.Basic, c.Kind, counter)
	dims, err := s.db.Dimensions(c)
	require.NoError(t, err)
	return dims
}

// extent is the size of one dimension of a hardware counter (1 if it has
// no such dimension).
func (s vgpuShape) extent(t *testing.T, counter string, dim counters.Dimension) int {
	for _, e := range s.dims(t, counter) {
		if e.Dim == dim {
			return e.Size
		}
	}
	return 1
}

// perInstance is the model's value of a hardware counter at each of its
// dimension instances, in instance order: XCC, block instance and shader
// engine (of the XCC) are the model's coordinates; any other dimension
// must have one instance.
func (s vgpuShape) perInstance(t *testing.T, counter string, d vgpuDispatch) []uint64 {
	dims := s.dims(t, counter)
	n := 1
	for _, e := range dims {
		n *= e.Size
	}
	out := make([]uint64, n)
	for k := range out {
		var xcc, se, inst int
		id := k
		for j := len(dims) - 1; j >= 0; j-- {
			c := id % dims[j].Size
			id /= dims[j].Size
			switch dims[j].Dim {
			case counters.DimXCC:
				xcc = c
			case counters.DimShaderEngine:
				se = c
			case counters.DimInstance:
				inst = c
			default:
				require.Equal(t, 1, dims[j].Size, "%s along %v: not in the model", counter, dims[j])
			}
		}
		out[k] = s.value(t, counter, d, xcc, se, inst)
	}
	return out
}

// csvValue is how counter_collection.csv prints a value: fixed with 6
// decimals from 1 up, scientific with 8 digits below (0 included).
func csvValue(v float64) string {
	if v >= 1 {
		return strconv.FormatFloat(v, 'f', 6, 64)
	}
	return strconv.FormatFloat(v, 'e', 8, 64)
}

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
