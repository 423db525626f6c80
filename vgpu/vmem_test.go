package vgpu

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Rounds of the vmem app per runtime whose HIP implements virtual memory
// management over ROCR's hsa_amd_vmem_* (0: HIP reports it unsupported:
// 5.2 has no such API, the 6.1 root's HIP 5.7.1 does not use ROCR's). HIP
// 6.4 runs two rounds: its hipMemMap intermittently dereferences a null
// pointer before calling ROCR on a third (see pkg/rocprof's vmem test).
var vmemRounds = map[string]int{"5.2": 0, "6.1": 0, "6.4": 2, "7.2": 3}

// HIP's virtual memory management runs on the virtual GPU (KFD 1.15: the
// handle exported as a DMA-buf, imported on the render node, mapped in the
// GPU's VM at the reserved address, mapped for the CPU at its GEM_MMAP
// offset): each round's GPU mapping of granularity × round bytes is made
// and removed exactly once, no call is refused, and the memset the app
// reads back reached the mapped pages (the app checks every word).
func TestVirtualMemoryManagement(t *testing.T) {
	for _, rt := range runtimes(t) {
		t.Run(rt.Name, func(t *testing.T) {
			rounds, ok := vmemRounds[rt.Name]
			require.True(t, ok, "ROCm %s: add it to vmemRounds", rt.Name)
			log := filepath.Join(t.TempDir(), "vgpu.jsonl")
			n := rounds
			if n == 0 {
				n = 1
			}
			r := runOn(t, rt, time.Minute, []string{"ROCPROF_VGPU_LOG=" + log}, filepath.Join(rt.Apps, "vmem"), strconv.Itoa(n))
			if rounds == 0 {
				require.Equal(t, 3, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
				require.Contains(t, r.stderr, "vmem: virtual memory management not supported")
				require.Empty(t, gemVA(t, log))
				return
			}
			require.Equal(t, 0, r.code, "stdout: %s\nstderr: %s", r.stdout, r.stderr)
			require.NotContains(t, r.stderr, "rocprof-go virtual GPU:")
			m := regexp.MustCompile(`vmem rounds=(\d+) granularity=(\d+)`).FindStringSubmatch(r.stdout)
			require.NotNil(t, m, r.stdout)
			gran, _ := strconv.ParseUint(m[2], 10, 64)
			ops := gemVA(t, log)
			require.Len(t, ops, 2*rounds, "one map and one unmap per round: %+v", ops)
			for i := 0; i < rounds; i++ {
				mp, um := ops[2*i], ops[2*i+1]
				require.Equal(t, "map", mp.Op)
				require.Equal(t, "unmap", um.Op)
				require.Equal(t, gran*uint64(i+1), mp.Bytes, "round %d", i)
				require.Equal(t, mp.VA, um.VA)
				require.Equal(t, mp.Gem, um.Gem)
				require.Zero(t, mp.Offset)
				require.Zero(t, mp.Result)
				require.Zero(t, um.Result)
			}
		})
	}
}

type gemVAOp struct {
	Type   string
	Op     string
	Gem    uint32
	VA     uint64
	Offset uint64
	Bytes  uint64
	Result int
}

func gemVA(t *testing.T, path string) []gemVAOp {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []gemVAOp
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var r gemVAOp
		require.NoError(t, json.Unmarshal(sc.Bytes(), &r))
		if r.Type == "gem_va" {
			out = append(out, r)
		}
	}
	require.NoError(t, sc.Err())
	return out
}
