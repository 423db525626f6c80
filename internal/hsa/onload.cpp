// onload.cpp: OnLoad and OnUnload, the shim's sequence of set-up steps.
//
// OnLoad checks the preload library it records through, maps the runtime's
// API tables (tables.cpp, by version), learns the agents (agents.cpp), sets
// up counter collection (pmc.cpp), installs the queue and activity hooks
// (queue.cpp, activity.cpp), then puts a tracer over every slot of the core,
// AMD-extension, image and finalizer tables. A tracer costs one branch when
// its domain is off; when on, two clock reads, a correlation id and one
// record, all in C++ (no Go on this path).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api_table.h"
#include "pmc.h"
#include "shim_internal.hpp"

// The recorder's hot path, inlined here (preload/rpg_internal.h, "The shim
// inlines the same path").
#define RPG_INLINE_FOREIGN 1
extern "C" {
#include "preload/rpg_internal.h"
}
#pragma weak rpg_inline_abi_get
rpg_inline_abi rpg__foreign;

extern "C" {
#include "_cgo_export.h"
}

CoreApiTable shim_core;
AmdExtTable shim_amd;
hsa_ven_amd_loader_1_01_pfn_t shim_loader;
bool shim_loader_ok;

namespace {

// ---- function names -------------------------------------------------------

#define NAME_OF(id, name, nargs) #name,
const char *const kCoreNames[] = {RPG_HSA_CORE_FUNCS(NAME_OF)};
const char *const kAmdNames[] = {RPG_HSA_AMD_EXT_FUNCS(NAME_OF)};
const char *const kImageNames[] = {RPG_HSA_IMAGE_EXT_FUNCS(NAME_OF)};
const char *const kFinalizerNames[] = {RPG_HSA_FINALIZER_EXT_FUNCS(NAME_OF)};
#undef NAME_OF

void record_names(uint32_t domain, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        rpg_record_string(domain, i, names[i], strlen(names[i]));
}

bool any_domain()
{
    return rpg_domains != 0;
}

// Whether the shim is loaded only to describe the agents: the pass traces
// HIP or marker calls (the preload library's) and nothing the shim records,
// so it writes the agents every format lists (agent_info.csv, the agent
// tables, which rocprofv3 fills in any run) and intercepts nothing. Read
// from the configuration, not from rpg_domains: --selected-regions clears
// that mask outside its regions, and OnLoad may well run there.
bool agents_only()
{
    auto on = [](const char *name) {
        const char *v = getenv(name);
        return v && v[0] == '1' && v[1] == 0;
    };
    static const char *const shim_vars[] = {
        RPG_ENV_HSA_CORE_API_TRACE,   RPG_ENV_HSA_AMD_EXT_API_TRACE,   RPG_ENV_HSA_IMAGE_EXT_API_TRACE,
        RPG_ENV_HSA_FINALIZER_EXT_API_TRACE, RPG_ENV_KERNEL_TRACE,   RPG_ENV_MEMORY_COPY_TRACE,
        RPG_ENV_MEMORY_ALLOCATION_TRACE, RPG_ENV_SCRATCH_MEMORY_TRACE, RPG_ENV_COUNTER_COLLECTION,
        RPG_ENV_ADVANCED_THREAD_TRACE};
    for (const char *v : shim_vars)
        if (on(v))
            return false;
    const char *pcs = getenv(RPG_ENV_PC_SAMPLING_METHOD);
    if (pcs && *pcs)
        return false;
    return on(RPG_ENV_HIP_RUNTIME_API_TRACE) || on(RPG_ENV_HIP_COMPILER_API_TRACE) ||
           on(RPG_ENV_MARKER_API_TRACE) || on(RPG_ENV_KERNEL_RENAME);
}

// A status string for the CLI (RPG_STRTAB_STATUS): whether the shim
// attached, and what it cannot collect here (tracing/kind.go, "lost
// domains" in docs/shim.md).
void note_status(uint64_t id, const char *text)
{
    if (&rpg_record_string != nullptr && rpg_domains)
        rpg_record_string(RPG_STRTAB_STATUS, id, text, strlen(text));
}

} // namespace

extern "C" __attribute__((visibility("default"))) bool
OnLoad(HsaApiTable *table, uint64_t runtime_version, uint64_t failed_tool_count,
       const char *const *failed_tool_names)
{
    (void)failed_tool_count;
    (void)failed_tool_names;
    // Without the preload library there is nowhere to record to: decline,
    // and the runtime unloads us (the app runs unprofiled).
    if (&rpg_domains == nullptr || &rpg_record_api == nullptr || &rpg_api_end == nullptr) {
        fprintf(stderr, "rocprof-go: the shim needs librocprof-go-preload.so in LD_PRELOAD\n");
        return false;
    }
    const rpg_inline_abi *abi = &rpg_inline_abi_get ? rpg_inline_abi_get() : nullptr;
    if (!abi || abi->size != sizeof(rpg_inline_abi) || abi->version != RPG_INLINE_ABI_VERSION ||
        abi->thread_state_size != sizeof(rpg_thread_state)) {
        fprintf(stderr, "rocprof-go: librocprof-go-preload.so in LD_PRELOAD is from another "
                        "rocprof-go build than the shim; use the pair one rocprof-go installs\n");
        return false;
    }
    rpg__foreign = *abi;
    char why[256];
    if (!shim_tables_open(table, why, sizeof why)) {
        if (!agents_only()) // nothing the user asked for is lost otherwise
            fprintf(stderr, "rocprof-go: %s: HSA tracing, kernels, copies and counters are off\n", why);
        note_status(RPG_STATUS_SHIM_DECLINED, why);
        return false;
    }
    {
        char tabs[192], what[256];
        shim_tables_describe(tabs, sizeof tabs);
        // runtime_version is the root table's major version (ROCR passes it).
        snprintf(what, sizeof what, "HSA API tables major %llu: %s", (unsigned long long)runtime_version,
                 tabs);
        note_status(RPG_STATUS_SHIM_ATTACHED, what);
    }

    // Go must be initialised before any executable is frozen; the first call
    // waits for the runtime (only safe in the pid that loaded us).
    if (shim_loaded_pid == shim_pid)
        rpgGoSetup();

    if (shim_core.hsa_system_get_major_extension_table_fn &&
        shim_core.hsa_system_get_major_extension_table_fn(
            HSA_EXTENSION_AMD_LOADER, 1, sizeof shim_loader, &shim_loader) == HSA_STATUS_SUCCESS)
        shim_loader_ok = true;

    shim_discover_agents();
    // An initialised runtime without a GPU agent (the KFD topology lists no
    // GPU it accepts): nothing can reach a GPU, which the CLI reports as
    // such rather than as an app that launched no kernel.
    if (shim_gpu_agent_count() == 0) {
        char what[128];
        snprintf(what, sizeof what, "the HSA runtime found %d agent%s, none of them a GPU", shim_agent_count(),
                 shim_agent_count() == 1 ? "" : "s");
        note_status(RPG_STATUS_NO_GPU_AGENT, what);
    }
    if (agents_only()) {
        shim_record_agents(); // and nothing intercepted
        shim_drop_startup_pages();
        return true;
    }
    {
        // PC sampling maps samples to dispatches: the queues are intercepted
        // and dispatches recorded whenever it is on (the CLI leaves
        // kernel_trace out unless asked for).
        char why3[256];
        if (!shim_pcs_init(why3, sizeof why3)) {
            fprintf(stderr, "rocprof-go: %s\n", why3);
            // Noted whatever else is recorded (PC sampling may be all the
            // run asked of the shim).
            if (&rpg_record_string != nullptr)
                rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_UNAVAILABLE | RPG_STATUS_PC_SAMPLING_BIT, why3,
                                  strlen(why3));
        } else if (shim_pcs_active) {
            rpg_domains |= RPG_DOMAIN_KERNEL;
        }
    }
    shim_pmc_init(); // counter plans need the agents (and Go)

    if (any_domain())
        shim_record_agents();
    if (rpg_domains & RPG_DOMAIN_HSA_CORE)
        record_names(RPG_API_HSA_CORE, kCoreNames, RPG_HSA_CORE_FUNCS_COUNT);
    if (rpg_domains & RPG_DOMAIN_HSA_AMD_EXT)
        record_names(RPG_API_HSA_AMD_EXT, kAmdNames, RPG_HSA_AMD_EXT_FUNCS_COUNT);
    if (rpg_domains & RPG_DOMAIN_HSA_IMAGE_EXT)
        record_names(RPG_API_HSA_IMAGE_EXT, kImageNames, RPG_HSA_IMAGE_EXT_FUNCS_COUNT);
    if (rpg_domains & RPG_DOMAIN_HSA_FINALIZER_EXT)
        record_names(RPG_API_HSA_FINALIZE_EXT, kFinalizerNames, RPG_HSA_FINALIZER_EXT_FUNCS_COUNT);

    // Activity hooks first, so that the API tracers wrap them.
    shim_install_queue_hooks();
    shim_install_activity_hooks();
    // Scratch memory events come through the runtime's tools table (ROCR 6.1
    // and later); without one the domain is unavailable here.
    if (rpg_domains & RPG_DOMAIN_SCRATCH_MEMORY) {
        char why2[256];
        if (!shim_install_tool_events(table, why2, sizeof why2))
            note_status(RPG_STATUS_UNAVAILABLE | (uint64_t)__builtin_ctz(RPG_DOMAIN_SCRATCH_MEMORY),
                        why2);
    }

    uint64_t *w = shim_counters.tables_wrapped, *k = shim_counters.tables_known;
    shim_tables_wrap(w, k);
    if (getenv(RPG_ENV_GO_SHIM_DEBUG)) {
        char tabs[256];
        shim_tables_describe(tabs, sizeof tabs);
        fprintf(stderr, "rocprof-go shim: tables %s; wrapped %llu/%llu/%llu/%llu; agents %d\n", tabs,
                (unsigned long long)w[0], (unsigned long long)w[1], (unsigned long long)w[2],
                (unsigned long long)w[3], shim_agent_count());
    }
    shim_drop_startup_pages();
    return true;
}

extern "C" __attribute__((visibility("default"))) void OnUnload()
{
    shim_pcs_shutdown();
    // Pure HSA apps get here, and HIP 6 and 7 apps at exit (HIP's destructors
    // call hsa_shut_down after destroying their queues); HIP 5 never does.
    shim_copies_shutdown();
    shim_queues_shutdown();
    shim_pmc_shutdown();
}
