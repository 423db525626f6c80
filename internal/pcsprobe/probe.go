//go:build cgo

package pcsprobe

/*
#cgo LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// The few HSA declarations the probe needs (hsa.h, hsa_ext_amd.h and
// hsa_ven_amd_pc_sampling.h 1.00 values): the CLI builds without ROCm's
// headers and loads the runtime by name.
typedef int rpg_status;
typedef struct { uint64_t handle; } rpg_agent;
typedef struct {
    int method, units;
    size_t min_interval, max_interval;
    uint64_t flags;
} rpg_pcs_config;
enum { RPG_AGENT_INFO_NAME = 0, RPG_AGENT_INFO_DEVICE = 17, RPG_DEVICE_GPU = 1,
       RPG_AMD_AGENT_INFO_DRIVER_NODE_ID = 0xA004 };

#define RPG_MAX_GPUS 64
#define RPG_MAX_CONFIGS 16

typedef struct {
    uint32_t node;
    char name[64];
    int status, nconfigs;
    rpg_pcs_config configs[RPG_MAX_CONFIGS];
} rpg_probe_gpu;

typedef struct {
    rpg_status (*get_info)(rpg_agent, int, void *);
    rpg_agent gpus[RPG_MAX_GPUS];
    int ngpus;
} rpg_probe_state;

static rpg_probe_state st;

static rpg_status rpg_each_agent(rpg_agent a, void *d)
{
    (void)d;
    int type = -1;
    if (st.get_info(a, RPG_AGENT_INFO_DEVICE, &type) == 0 && type == RPG_DEVICE_GPU && st.ngpus < RPG_MAX_GPUS)
        st.gpus[st.ngpus++] = a;
    return 0;
}

static rpg_status rpg_each_config(const rpg_pcs_config *c, void *d)
{
    rpg_probe_gpu *g = d;
    if (g->nconfigs < RPG_MAX_CONFIGS)
        g->configs[g->nconfigs++] = *c;
    return 0;
}

// rpg_probe loads the runtime, initialises HSA and fills out[] (at most
// max GPUs); it returns the number of GPUs, or -1 with why set.
static int rpg_probe(const char *lib, rpg_probe_gpu *out, int max, char *why, size_t whylen)
{
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        snprintf(why, whylen, "dlopen: %s", dlerror());
        return -1;
    }
    rpg_status (*init)(void) = (rpg_status (*)(void))dlsym(h, "hsa_init");
    rpg_status (*shut)(void) = (rpg_status (*)(void))dlsym(h, "hsa_shut_down");
    rpg_status (*iter_agents)(rpg_status (*)(rpg_agent, void *), void *) =
        (rpg_status (*)(rpg_status (*)(rpg_agent, void *), void *))dlsym(h, "hsa_iterate_agents");
    rpg_status (*iter_cfg)(rpg_agent, rpg_status (*)(const rpg_pcs_config *, void *), void *) =
        (rpg_status (*)(rpg_agent, rpg_status (*)(const rpg_pcs_config *, void *), void *))dlsym(
            h, "hsa_ven_amd_pcs_iterate_configuration");
    st.get_info = (rpg_status (*)(rpg_agent, int, void *))dlsym(h, "hsa_agent_get_info");
    if (!init || !iter_agents || !st.get_info) {
        snprintf(why, whylen, "%s lacks the HSA core functions", lib);
        return -1;
    }
    if (!iter_cfg) {
        snprintf(why, whylen, "%s exports no hsa_ven_amd_pcs_iterate_configuration", lib);
        return -1;
    }
    rpg_status s = init();
    if (s != 0) {
        snprintf(why, whylen, "hsa_init: status %#x", (unsigned)s);
        return -1;
    }
    st.ngpus = 0;
    iter_agents(rpg_each_agent, NULL);
    int n = st.ngpus < max ? st.ngpus : max;
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        st.get_info(st.gpus[i], RPG_AGENT_INFO_NAME, out[i].name);
        out[i].name[sizeof out[i].name - 1] = 0;
        st.get_info(st.gpus[i], RPG_AMD_AGENT_INFO_DRIVER_NODE_ID, &out[i].node);
        out[i].status = iter_cfg(st.gpus[i], rpg_each_config, &out[i]);
    }
    if (shut)
        shut();
    return n;
}
*/
import "C"

import (
	"errors"
	"fmt"
	"unsafe"
)

// Probe loads the runtime library lib (a path, or a name for dlopen) in
// this process, initialises HSA and lists each GPU agent's PC-sampling
// configurations. It is meant for a probe process: HSA stays loaded.
func Probe(lib string) ([]GPU, error) {
	clib := C.CString(lib)
	defer C.free(unsafe.Pointer(clib))
	out := make([]C.rpg_probe_gpu, C.RPG_MAX_GPUS)
	why := make([]byte, 512)
	n := int(C.rpg_probe(clib, &out[0], C.int(len(out)), (*C.char)(unsafe.Pointer(&why[0])), C.size_t(len(why))))
	if n < 0 {
		return nil, errors.New(C.GoString((*C.char)(unsafe.Pointer(&why[0]))))
	}
	gpus := make([]GPU, n)
	for i := range gpus {
		g := &out[i]
		gpus[i] = GPU{Node: uint32(g.node), Name: C.GoString(&g.name[0]), Configs: []Config{}}
		if g.status != 0 {
			gpus[i].Err = fmt.Sprintf("hsa_ven_amd_pcs_iterate_configuration: status %#x", uint32(g.status))
		}
		for j := 0; j < int(g.nconfigs); j++ {
			c := &g.configs[j]
			gpus[i].Configs = append(gpus[i].Configs, Config{Method: methodName(int(c.method)), Unit: unitName(int(c.units)),
				Min: uint64(c.min_interval), Max: uint64(c.max_interval), Pow2: c.flags&1 != 0})
		}
	}
	return gpus, nil
}
