package listavail

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocprof-go/rocprof-go/internal/rocmmatrix"
	"github.com/rocprof-go/rocprof-go/internal/testsys"
)

func repoDir(t *testing.T) string { return testsys.RepoRoot(t) }

// install runs `make install PREFIX=...` into a scratch prefix (the CLI is
// the one `make build` built).
func install(t *testing.T) string {
	repo := repoDir(t)
	_, err := os.Stat(filepath.Join(repo, "build", "rocprof-go"))
	require.NoError(t, err, "run make build first")
	prefix := t.TempDir()
	out, err := exec.Command("make", "-C", repo, "--no-print-directory", "-s", "install", "PREFIX="+prefix).CombinedOutput()
	require.NoError(t, err, "%s", out)
	return prefix
}

// rocprofilerCompute is what rocprofiler-compute's soc_base.py does to list
// the counters of rocprofv3's GPU (its get_rocprof_supported_counters):
// bin/ of --rocprofiler-sdk-library-path's prefix on sys.path, import
// rocprofv3_avail_module.avail, point loadLibrary.libname at
// lib/rocprofiler-sdk/librocprofv3-list-avail.so, get_counters(), the first
// agent's counters that have a block or an expression. The script also
// prints every counter of that agent as the listing shows it.
const rocprofilerCompute = `
import json, sys
from pathlib import Path
sdk = Path(sys.argv[1])
sys.path.append(str(sdk.parent.parent / "bin"))
from rocprofv3_avail_module import avail
avail.loadLibrary.libname = str(sdk.parent.parent / "lib" / "rocprofiler-sdk" / "librocprofv3-list-avail.so")
counters = avail.get_counters()
first = counters[list(counters.keys())[0]]
compute = sorted({c.name for c in first if hasattr(c, "block") or hasattr(c, "expression")})
listing = []
for c in first:
    e = {"name": c.name, "description": c.description,
         "dims": " ".join(str(d) for d in c.dimensions)}
    if hasattr(c, "block"):
        e["block"] = c.block
    if hasattr(c, "expression"):
        e["expression"] = c.expression
    listing.append(e)
info = avail.get_agent_info_map()
print(json.dumps({"agents": len(counters), "arch": info[list(counters.keys())[0]]["name"],
                  "compute": compute, "listing": listing}))
`

type listed struct {
	Name, Description, Block, Expression, Dims string
}

type pyResult struct {
	Agents  int      `json:"agents"`
	Arch    string   `json:"arch"`
	Compute []string `json:"compute"`
	Listing []struct {
		Name        string  `json:"name"`
		Description string  `json:"description"`
		Block       *string `json:"block"`
		Expression  *string `json:"expression"`
		Dims        string  `json:"dims"`
	} `json:"listing"`
}

// parseListing reads rocprof-go -L's first GPU.
func parseListing(t *testing.T, text string) []listed {
	var out []listed
	gpus := 0
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "GPU:") {
			gpus++
			if gpus > 1 {
				break
			}
		}
		k, v, ok := strings.Cut(line, " : ")
		if !ok {
			if k, ok := strings.CutSuffix(line, " :"); ok && k == "Dimensions" {
				v = ""
			} else {
				continue
			}
			k = "Dimensions"
		}
		switch k {
		case "Counter_Name":
			out = append(out, listed{Name: v})
		case "Description":
			out[len(out)-1].Description = v
		case "Block":
			out[len(out)-1].Block = v
		case "Expression":
			out[len(out)-1].Expression = v
		case "Dimensions":
			out[len(out)-1].Dims = v
		}
	}
	require.NotEmpty(t, out)
	return out
}

func runPython(t *testing.T, prefix string, env []string) pyResult {
	cmd := exec.Command("python3", "-c", rocprofilerCompute, filepath.Join(prefix, "lib", "librocprofiler-sdk.so"))
	cmd.Env = env
	cmd.Dir = t.TempDir()
	out, err := cmd.Output()
	var stderr []byte
	if ee, ok := err.(*exec.ExitError); ok {
		stderr = ee.Stderr
	}
	require.NoError(t, err, "%s", stderr)
	var res pyResult
	require.NoError(t, json.Unmarshal(out, &res), "%s", out)
	return res
}

// rocprofiler-compute lists the virtual GPU's counters through the module
// and library `make install` puts beside rocprofv3, on gfx90a and gfx942
// (the GPU named by the config file's virtual_gpu, as a rocprofiler-compute
// run on the virtual GPU configures it): the same counters, in the same
// order, with the same descriptions, blocks, expressions and dimensions as
// rocprofv3 -L; its set is the listing's hardware and derived counters.
// With ROCPROFILER_METRICS_PATH (rocprofiler-compute sets it to its
// definitions before listing) the file's counters are listed instead.
func TestRocprofilerComputeListsCountersThroughTheModule(t *testing.T) {
	prefix := install(t)
	for _, arch := range []string{"gfx90a", "gfx942"} {
		t.Run(arch, func(t *testing.T) {
			xdg := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(xdg, "rocprof-go"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(xdg, "rocprof-go", "config.yaml"), []byte("virtual_gpu: "+arch+"\n"), 0o644))
			env := append(os.Environ(), "XDG_CONFIG_HOME="+xdg)
			env = filterEnv(env, "ROCPROFILER_METRICS_PATH", "PYTHONPATH")

			res := runPython(t, prefix, env)
			require.Equal(t, 1, res.Agents)
			require.Equal(t, arch, res.Arch)

			cli := exec.Command(filepath.Join(prefix, "bin", "rocprofv3"), "-L", "--virtual-gpu", arch)
			cli.Env = env
			text, err := cli.Output()
			require.NoError(t, err)
			want := parseListing(t, string(text))
			got := make([]listed, len(res.Listing))
			for i, c := range res.Listing {
				got[i] = listed{Name: c.Name, Description: c.Description, Dims: c.Dims}
				if c.Block != nil {
					got[i].Block = *c.Block
				}
				if c.Expression != nil {
					got[i].Expression = *c.Expression
				}
			}
			// The module shows no dimensions for the agent-property
			// constants (rocprofiler-sdk's neither); -L shows INSTANCE[0:0].
			for i := range want {
				if want[i].Block == "" && want[i].Expression == "" {
					want[i].Dims = ""
				}
			}
			require.Equal(t, want, got)
			var compute []string
			for _, c := range want {
				if c.Block != "" || c.Expression != "" {
					compute = append(compute, c.Name)
				}
			}
			require.ElementsMatch(t, compute, res.Compute)
			require.Contains(t, res.Compute, "SQ_WAVES")
			require.Contains(t, res.Compute, "GPU_UTIL")

			defs := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(defs, "counter_defs.yaml"), []byte(`rocprofiler-sdk:
  counters-schema-version: 1
  counters:
    - name: MY_WAVES
      description: "waves, tab\there"
      properties: []
      definitions:
        - architectures: [`+arch+`]
          expression: reduce(SQ_WAVES,sum)
    - name: SQ_WAVES
      description: waves
      properties: []
      definitions:
        - architectures: [`+arch+`]
          block: SQ
          event: 4
`), 0o644))
			res = runPython(t, prefix, append(env, "ROCPROFILER_METRICS_PATH="+defs))
			require.Equal(t, []string{"MY_WAVES", "SQ_WAVES"}, res.Compute)
			for _, c := range res.Listing {
				if c.Name == "MY_WAVES" {
					require.Equal(t, "waves, tab here", c.Description) // -L's spacing
					require.Equal(t, "reduce(SQ_WAVES,sum)", *c.Expression)
				}
			}
		})
	}
}

func filterEnv(env []string, names ...string) []string {
	out := env[:0:0]
	for _, kv := range env {
		keep := true
		for _, n := range names {
			if strings.HasPrefix(kv, n+"=") {
				keep = false
			}
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}

// pcSampling is what rocprofv3's avail module does to list PC sampling
// (rocprofv3-avail info --pc-sampling): get_pc_sample_configs(), each
// configuration printed under its GPU's index and name. The script also
// calls the library as rocprofiler-sdk's own module does (c_ulong
// arguments, the flags' integer passed without byref: ctypes passes its
// address) and returns the raw numbers, and what the library answers for
// the agent's count.
const pcSampling = `
import ctypes, json, sys
from pathlib import Path
prefix = Path(sys.argv[1])
sys.path.append(str(prefix / "bin"))
from rocprofv3_avail_module import avail
avail.loadLibrary.libname = str(prefix / "lib" / "rocprofiler-sdk" / "librocprofv3-list-avail.so")
info = avail.get_agent_info_map()
text = ""
for agent, configs in sorted(avail.get_pc_sample_configs().items()):
    text += "{:8}:\t{}\n{:8}:\t{}\n".format("GPU", info[agent]["logical_node_type_id"], "Name", info[agent]["name"])
    text += "{:8}:\n".format("configs")
    for config in configs:
        text += str(config) + "\n\n\n"
    text += "\n\n"
lib = ctypes.CDLL(str(prefix / "lib" / "rocprofiler-sdk" / "librocprofv3-list-avail.so"))
lib.get_number_of_pc_sample_configs.argtypes = [ctypes.c_ulong]
lib.get_number_of_pc_sample_configs.restype = ctypes.c_ulong
lib.pc_sample_config.argtypes = [ctypes.c_ulong, ctypes.c_ulong] + [ctypes.POINTER(ctypes.c_ulong)] * 5
raw = {}
for agent in info:
    rows = []
    for i in range(lib.get_number_of_pc_sample_configs(agent)):
        method, unit, lo, hi, flags = (ctypes.c_ulong() for _ in range(5))
        lib.pc_sample_config(agent, i, ctypes.byref(method), ctypes.byref(unit), ctypes.byref(lo), ctypes.byref(hi), flags)
        rows.append([method.value, unit.value, lo.value, hi.value, flags.value])
    raw[info[agent]["name"]] = rows
print(json.dumps({"text": text, "raw": raw}))
`

// rocprofv3's avail module lists each GPU's PC-sampling configurations
// through the library: on ROCm 6.4 and 7.2 the runtime's (the virtual GPU's
// gfx90a: host trap in microseconds; gfx942: host trap and stochastic in
// cycles, a power of two), in rocprofiler-sdk's enum numbers
// (rocprofiler_pc_sampling_method_t: stochastic 1, host_trap 2;
// rocprofiler_pc_sampling_unit_t: instructions 1, cycles 2, time 3; flags:
// 1 = interval pow2), printed by the module exactly as rocprof-go avail
// lists them, without a note (the runtime answered, not rocprof-go's
// table); on ROCm 5.2 and 6.1, whose runtime has no PC sampling, none.
func TestPCSampleConfigsThroughTheModule(t *testing.T) {
	prefix := install(t)
	repo := repoDir(t)
	rts, err := rocmmatrix.Runtimes(repo, filepath.Join(repo, "build"))
	require.NoError(t, err)
	maxU64 := uint64(math.MaxUint64)
	hostTrap := []uint64{2, 3, 1, maxU64, 0}
	stochastic := []uint64{1, 2, 256, 1 << 31, 1}
	want := map[string][][]uint64{"gfx90a": {hostTrap}, "gfx942": {hostTrap, stochastic}}
	for _, rt := range rts {
		rt := rt
		t.Run(rt.Name, func(t *testing.T) {
			require.NoError(t, rt.Check())
			xdg := t.TempDir()
			if !strings.HasPrefix(prefix, "/tmp/") || !strings.HasPrefix(xdg, "/tmp/") {
				rt = rt.WithBinds(filepath.Dir(prefix), filepath.Dir(xdg))
			}
			offers := rt.Name != rocmmatrix.HostName && rt.Name != "6.1"
			for _, arch := range []string{"gfx90a", "gfx942"} {
				require.NoError(t, os.MkdirAll(filepath.Join(xdg, "rocprof-go"), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(xdg, "rocprof-go", "config.yaml"), []byte("virtual_gpu: "+arch+"\n"), 0o644))
				env := filterEnv(append(os.Environ(), "XDG_CONFIG_HOME="+xdg), "ROCPROFILER_METRICS_PATH", "PYTHONPATH")
				run := func(prog string, args ...string) (string, string) {
					ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
					defer cancel()
					cmd := rt.Command(ctx, prog, args...)
					cmd.Env = env
					cmd.Dir = xdg
					var stderr bytes.Buffer
					cmd.Stderr = &stderr
					out, err := cmd.Output()
					require.NoError(t, err, "%s %s", prog, stderr.String())
					return string(out), stderr.String()
				}
				out, notes := run("python3", "-c", pcSampling, prefix)
				require.NotContains(t, notes, "note:", arch)
				var res struct {
					Text string                `json:"text"`
					Raw  map[string][][]uint64 `json:"raw"`
				}
				require.NoError(t, json.Unmarshal([]byte(out), &res), out)
				if !offers {
					require.Equal(t, map[string][][]uint64{arch: {}}, res.Raw, arch)
					require.Empty(t, res.Text, arch)
					continue
				}
				require.Equal(t, map[string][][]uint64{arch: want[arch]}, res.Raw, arch)
				listing, _ := run(filepath.Join(prefix, "bin", "rocprofv3"), "avail")
				require.Contains(t, res.Text, "GPU     :\t0\nName    :\t"+arch+"\nconfigs :\n")
				require.True(t, strings.HasSuffix(listing, res.Text), "%s: the module prints what avail lists:\n%s\n---\n%s", arch, res.Text, listing)
			}
		})
	}
}
