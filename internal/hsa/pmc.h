/*
 * pmc.h: counter collection, shared by pmc.cpp, queue.cpp and pmc.go.
 *
 * Go (pmc.go) builds, once per GPU agent and counter group, the PMC
 * start/stop/read packets of SHIM_PMC_SLOTS slots (each slot has its own
 * output and command buffers, so a slot being decoded is never overwritten by
 * the next profiled dispatch) and hands them to C. The intercept callback
 * (queue.cpp -> shim_pmc_expand) then wraps each selected dispatch as
 *
 *     [barrier-AND on the previous profiled dispatch of the agent] start
 *     dispatch stop read
 *
 * in one writer call; the read packet completes a signal of the slot. The
 * completion thread (queue.cpp -> shim_pmc_complete) hands the slot to Go,
 * which decodes, evaluates and records the samples, then frees the slot.
 */
#ifndef RPG_SHIM_PMC_H
#define RPG_SHIM_PMC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Output buffers per agent and group: how many profiled dispatches of one
 * agent can be in flight (submitted, not yet decoded) at once. With 8, an
 * app launching kernels back to back waited for a free slot after every few
 * launches, and the GPU went idle meanwhile; 32 keep the GPU busy while the
 * completion thread decodes (a slot's buffers are a few KiB). */
#define SHIM_PMC_SLOTS 32
#define SHIM_PMC_MAX_AGENTS 16
#define SHIM_PMC_MAX_GROUPS 64

/* What Go needs to know about one GPU agent to load its counter database. */
typedef struct shim_pmc_agent_desc {
    uint64_t handle;
    uint32_t node;
    uint32_t gpu_index; /* among GPU agents, in HSA's order */
    char name[64];      /* HSA_AGENT_INFO_NAME, e.g. "gfx90a" */
    uint32_t cu_count;
    uint32_t simd_per_cu;
    uint32_t se_count;  /* shader engines, all XCCs together */
    uint32_t sa_per_se;
    uint32_t num_xcc;   /* XCCs (shim_agent_num_xcc): 8 on an MI300X */
    uint32_t wave_size;
    uint32_t max_waves_per_cu;
    uint32_t clock_mhz;
    uint32_t chip_id;
    uint32_t location_id;
    uint32_t domain;
    uint64_t lds_bytes;
} shim_pmc_agent_desc;

/* Fills up to cap GPU agents; returns how many there are. */
int shim_pmc_agents(shim_pmc_agent_desc *out, int cap);

/* Host memory the agent's command processor can read and write (a
 * fine-grained system pool), zeroed when asked (a thread-trace buffer is
 * not: touching 256 MiB would make it resident); NULL on failure. */
void *shim_pmc_alloc(uint64_t agent, uint64_t size, int zero);

/* The request as C needs it. */
/* slots: 1..SHIM_PMC_SLOTS output buffers (thread trace uses 1: its buffer
 * is large, and its dispatches then wait on the host for the previous one). */
int shim_pmc_agent_add(uint64_t agent, uint32_t gpu_index, uint32_t node, uint32_t groups,
                       uint32_t interval, uint32_t slots);
/* read is NULL for a thread-trace packet set (start, stop). */
void shim_pmc_set_packets(int agent_index, uint32_t group, uint32_t slot, const void *start,
                          const void *stop, const void *read);
/* ranges: n pairs [lo, hi] of 1-based per-kernel iterations (n == 0: all). */
/* Thread trace: serialise every dispatch on the agent, traced or not
 * (--att-serialize-all), as counting does. */
void shim_pmc_set_hold_all(int agent_index, int on);
/* Thread trace: the AQL packet (64 bytes) of the loaded code objects'
 * markers, injected after each start packet (replaced as code objects load
 * and unload; NULL: none). */
void shim_pmc_set_marker(int agent_index, const void *packet);
void shim_pmc_set_filter(int filtered, const uint64_t *ranges, int n);
/* The include/exclude decision for one kernel object. */
void shim_pmc_kernel(uint64_t kernel_object, int selected);
/* Turns injection on once every agent is set up. */
void shim_pmc_enable(void);
/* Called from OnLoad once the agents are known (pmc.cpp). */
void shim_pmc_init(void);
/* Non-zero once counter collection or thread trace is set up: the queues
 * must be intercepted even without kernel tracing. */
extern int shim_pmc_on;

/* Statistics for tests. */
typedef struct shim_pmc_stats {
    uint64_t profiled;   /* dispatches wrapped with PMC packets */
    uint64_t barriers;   /* serialisation barriers inserted */
    uint64_t completed;  /* slots decoded */
    uint64_t skipped;    /* selected dispatches left unprofiled (no free slot in time) */
    uint64_t filtered;   /* dispatches the filters left out */
    /* With ROCPROF_GO_PMC_TIMING=1 only, thread CPU time: */
    uint64_t expand_ns;   /* app threads, in shim_pmc_expand (waits included) */
    uint64_t wait_ns;     /* of which waiting for a free slot (serialisation) */
    uint64_t complete_ns; /* completion threads, decoding and recording */
} shim_pmc_stats;
extern shim_pmc_stats shim_pmc_counters;

#ifdef __cplusplus
}

#include <hsa.h>

// A packet's role in counter collection, per packet of an expanded array.
struct ShimPmcTag {
    void *bind;     // the dispatch of this slot: give the slot its dispatch id
    void *complete; // the slot's read packet: decode when it completes
};

// Expands the intercepted packets: returns the packets to write (pkts itself
// when nothing is profiled) and their count; *tags is null or has one entry
// per returned packet. Called with the queue's producer lock held.
uint64_t shim_pmc_expand(hsa_agent_t agent, hsa_kernel_dispatch_packet_t **pkts, uint64_t count,
                         const ShimPmcTag **tags);
// The slot's dispatch got its id.
void shim_pmc_bind(void *slot, uint64_t dispatch_id);
// Copies while counting (pmc.cpp, "copies against counted dispatches"):
// whether copies must be fenced; submits a copy with the extra dependencies
// (submit gets the full list) and makes its own signal the copies' fence;
// held[0..*nheld) (room for SHIM_PMC_MAX_AGENTS + 1) are the fence's signals
// the copy waits for, released with the copy (shim_pmc_copy_done), which
// also says whether the copy's own signal may go back to the pool now
// (false: the fence returns it later itself).
bool shim_pmc_fencing();
hsa_status_t shim_pmc_fenced_copy(hsa_signal_t ours, uint32_t num_dep, const hsa_signal_t *deps,
                                  hsa_status_t (*submit)(void *ctx, uint32_t n, const hsa_signal_t *deps),
                                  void *ctx, hsa_signal_t *held, int *nheld);
bool shim_pmc_copy_done(hsa_signal_t ours, const hsa_signal_t *held, int nheld);
// Around a runtime call that runs GPU work of its own (code object loads,
// hsa_memory_copy, hsa_amd_memory_fill): no counted dispatch runs meanwhile.
bool shim_pmc_exclusive_begin();
void shim_pmc_exclusive_end(bool held);
// The slot's read packet completed (completion thread): decode it.
void shim_pmc_complete(void *slot);
// Then, once the slot's signal has been passed on (it is 0): the slot may be
// used again. In this order, so that a slot's signal is never re-armed
// before the completion of its previous use has reached it.
void shim_pmc_release(void *slot);
#endif
#endif /* RPG_SHIM_PMC_H */
