// shim_internal.hpp: declarations shared by the shim's C++ files (they need
// hsa_api_trace.h, which is C++ only, so they stay out of shim.h).
#ifndef RPG_SHIM_INTERNAL_HPP
#define RPG_SHIM_INTERNAL_HPP

#include <hsa_api_trace.h>
#include <hsa_ven_amd_loader.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "shim.h"

// The runtime's own functions, copied before any slot is replaced: the shim
// calls these so that its own HSA calls are never traced nor re-intercepted.
// Slots past what the running runtime provides stay null.
extern CoreApiTable shim_core;
extern AmdExtTable shim_amd;
extern hsa_ven_amd_loader_1_01_pfn_t shim_loader;
extern bool shim_loader_ok;

// What the shim knows about one agent (agents never change after hsa_init).
struct ShimAgent {
    hsa_agent_t agent;
    hsa_device_type_t type;
    uint32_t node;        // KFD node id
    uint32_t gfx_major;   // from the ISA name, GPUs only
    uint32_t gfx_minor;   // minor*16+stepping digit pair as written: gfx90a -> 0x0a
};
const ShimAgent *shim_find_agent(hsa_agent_t a);
// The first CPU agent (host side of copies).
const ShimAgent *shim_host_agent();
// Node of the agent owning a memory pool or region (UINT32_MAX if unknown).
uint32_t shim_pool_node(uint64_t pool_or_region);

// futex(2) on a 32-bit atomic, for the shim's sleeping threads; ts bounds a
// wait (relative), nullptr waits until woken.
inline long shim_futex(std::atomic<uint32_t> *w, int op, uint32_t v,
                       const struct timespec *ts = nullptr)
{
    return syscall(SYS_futex, (uint32_t *)w, op, v, ts, nullptr, 0);
}

// Hooks installed under the API tracers (activity.cpp, queue.cpp).
void shim_install_activity_hooks(CoreApiTable *core, AmdExtTable *amd, uint32_t core_size,
                                 uint32_t amd_size);
void shim_install_queue_hooks(CoreApiTable *core, uint32_t core_size);

// Interrupt signals (value 1) from a shared pool; put them back once done.
hsa_signal_t shim_signal_get();
void shim_signal_put(hsa_signal_t s);

// An app thread's wait on an intercepted queue's app-visible packet finishes
// that packet itself (queue.cpp); false if `app` is no pending packet's.
bool shim_queue_assist(hsa_signal_t app, uint64_t timeout, hsa_wait_state_t hint, bool *done);

// Stops the completion threads and releases the shim's signals (OnUnload).
void shim_queues_shutdown();
// From OnUnload, first: stops the copy waiters (activity.cpp).
void shim_copies_shutdown();

// True when slot `member` lies inside the part of a table both we and the
// running runtime know.
#define SHIM_HAS(tbl, size, member) \
    (offsetof(tbl, member) + sizeof(void *) <= (size_t)(size))

static inline uint64_t shim_correlation()
{
    uint64_t c = rpg_correlation_current();
    return c ? c : rpg_correlation_next();
}

#endif
