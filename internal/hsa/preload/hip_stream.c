/*
 * hip_stream.c: HIP stream ids. rocprofv3 numbers HIP streams (0 for the
 * null stream, then 1, 2, ... in order of appearance) rather than printing
 * their addresses; so does rocprof-go, here, so that every record and output
 * agrees on the numbers.
 *
 * A stream is numbered the first time a record needs its number (its first
 * dispatch or copy, or a roctxNameHipStream naming it) and forgotten when
 * hipStreamDestroy returns, so that a new stream HIP happens to allocate at
 * the same address gets a new number. The table is open-addressed and
 * lock-free: every thread numbering the same handle probes the same slots
 * and the first empty one is claimed by exactly one of them.
 */
#include "hip_trace.h"

#define STREAM_SLOTS 16384u /* power of two; streams a process may create */
#define DEAD UINT64_MAX      /* a forgotten handle's slot */

static struct {
    uint64_t handle; /* atomic: 0 empty, DEAD forgotten */
    uint64_t id;     /* atomic: 0 until published */
} g_streams[STREAM_SLOTS];

static uint64_t g_next_stream; /* atomic */

static uint32_t slot_of(uint64_t h)
{
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    return (uint32_t)h & (STREAM_SLOTS - 1);
}

uint64_t rpg_hip_stream_id(uint64_t handle)
{
    if (handle == 0 || handle == DEAD)
        return 0;
    uint32_t s = slot_of(handle);
    for (uint32_t n = 0; n < STREAM_SLOTS; n++, s = (s + 1) & (STREAM_SLOTS - 1)) {
        uint64_t h = __atomic_load_n(&g_streams[s].handle, __ATOMIC_ACQUIRE);
        if (h == 0) {
            uint64_t expect = 0;
            if (__atomic_compare_exchange_n(&g_streams[s].handle, &expect, handle, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                uint64_t id = __atomic_add_fetch(&g_next_stream, 1, __ATOMIC_RELAXED);
                __atomic_store_n(&g_streams[s].id, id, __ATOMIC_RELEASE);
                /* Once per stream: which handle the number stands for, so
                 * that the writers can number recorded hipStream_t
                 * arguments too (the handle alone is reused after
                 * hipStreamDestroy; the call's correlation id dates it). */
                rpg_stream_note note = {handle, rpg_correlation_current()};
                rpg_record_string(RPG_STRTAB_STREAM, id, (const char *)&note, sizeof note);
                /* Correlation ids are in time order per thread only; the
                 * writers date a handle's numbers by them across threads:
                 * every call starting from now gets a larger id. */
                rpg__correlation_barrier();
                return id;
            }
            h = expect; /* someone claimed the slot first: theirs may be ours */
        }
        if (h == handle) {
            uint64_t id;
            while ((id = __atomic_load_n(&g_streams[s].id, __ATOMIC_ACQUIRE)) == 0)
                __builtin_ia32_pause();
            return id;
        }
    }
    return 0; /* table full: report the null stream rather than a wrong one */
}

void rpg_hip_stream_forget(uint64_t handle)
{
    if (handle == 0 || handle == DEAD)
        return;
    uint32_t s = slot_of(handle);
    for (uint32_t n = 0; n < STREAM_SLOTS; n++, s = (s + 1) & (STREAM_SLOTS - 1)) {
        uint64_t h = __atomic_load_n(&g_streams[s].handle, __ATOMIC_ACQUIRE);
        if (h == 0)
            return;
        if (h == handle) {
            __atomic_store_n(&g_streams[s].handle, DEAD, __ATOMIC_RELEASE);
            /* The handle may come back as a new stream: calls from now on
             * (on any thread) must date after every call on this one. */
            rpg__correlation_barrier();
            return;
        }
    }
}

uint64_t rpg_hip_current_stream(void) { return rpg_hip_stream_id(RPG_T.hip_stream); }
