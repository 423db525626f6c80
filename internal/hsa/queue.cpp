// queue.cpp: kernel dispatch tracing through intercepted queues.
//
// hsa_queue_create is answered with hsa_amd_queue_intercept_create, and the
// intercept callback (on the thread that rings the doorbell) gives every
// packet its own completion signal from a pool, remembering the app's signal
// (if any) in a per-queue FIFO. One completion
// thread per queue waits for the FIFO's head, reads the runtime's profiling
// timestamps (already in the system clock domain, i.e. CLOCK_BOOTTIME ns),
// records the dispatch, and only then decrements the app's signal: whatever
// the app saw complete has been recorded, so an abort or SIGKILL right after
// a synchronisation loses nothing. Barrier packets go through the same FIFO
// so that they cannot signal the app before the dispatches ahead of them are
// recorded.
//
// Which HIP call a dispatch belongs to is decided when its queue slot is
// reserved, not in the callback: the runtime's intercept queue runs the
// callback on whichever thread rings the doorbell after the packet became
// valid — another thread, or a later call of the same thread, when a slot
// reserved earlier was still being written (docs/hip-roctx.md). So the
// write-index reservations (hsa_queue_add/cas_write_index_*, on the thread
// and inside the HIP call that writes the packet) tag each reserved slot with
// the thread's correlation id, stream and thread id, and the callback reads
// the tag of the slot it is handed (its user_index).
//
// A process that dies by a signal keeps the dispatches the GPU completed
// before it (issue 19): crash.cpp's handler calls shim_queues_crash_flush,
// which records every completed FIFO entry nobody recorded yet, reading the
// timestamps from the signal's memory and converting them with the queue's
// TickMap. Each entry's claim word makes exactly one thread record it.
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include <hsa/amd_hsa_queue.h>
#include <new>

#include "pmc.h"
#include <amd_hsa_signal.h>

#include "shim_internal.hpp"

namespace {

// ---- signal pool ------------------------------------------------------------

// A growable stack of signals under its own lock.
struct SignalStack {
    pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    hsa_signal_t *v = nullptr;
    size_t n = 0, cap = 0;

    // With the lock held; false (s not kept) when memory runs out.
    bool push_locked(hsa_signal_t s)
    {
        if (n == cap) {
            size_t c = cap ? cap * 2 : 256;
            hsa_signal_t *nv = (hsa_signal_t *)realloc(v, c * sizeof *nv);
            if (!nv)
                return false;
            v = nv;
            cap = c;
        }
        v[n++] = s;
        return true;
    }
};

SignalStack g_pool;

hsa_signal_t pool_get()
{
    hsa_signal_t s{0};
    pthread_mutex_lock(&g_pool.lock);
    if (g_pool.n)
        s = g_pool.v[--g_pool.n];
    pthread_mutex_unlock(&g_pool.lock);
    if (!s.handle && shim_core.hsa_signal_create_fn(1, 0, nullptr, &s) != HSA_STATUS_SUCCESS)
        s.handle = 0;
    return s;
}

void pool_put(hsa_signal_t s)
{
    // Silent: nobody waits on it yet, so no wake-up syscall.
    shim_core.hsa_signal_silent_store_relaxed_fn(s, 1);
    pthread_mutex_lock(&g_pool.lock);
    (void)g_pool.push_locked(s); // out of memory: leak one signal rather than fail
    pthread_mutex_unlock(&g_pool.lock);
}

} // namespace

// Interrupt signals for other activity (copies) come from the same pool.
hsa_signal_t shim_signal_get() { return pool_get(); }
void shim_signal_put(hsa_signal_t s) { pool_put(s); }

namespace {

// ---- queues -------------------------------------------------------------------

struct Pending {
    hsa_signal_t ours;
    hsa_signal_t slot_signal; // this ring slot's own memory-only signal, reused
    bool interrupt;           // ours came from the interrupt-signal pool
    hsa_signal_t app;
    uint64_t dispatch_id; // 0: not a dispatch (a barrier whose signal we hold)
    uint64_t correlation_id;
    uint64_t stream_id;
    uint64_t kernel_object;
    uint64_t packet_index; // the dispatch's slot in the app's queue (rocprof v1's queue-index)
    uint32_t tid;
    uint32_t grid[3];
    uint16_t wg[3];
    uint32_t group_segment_size;
    uint32_t private_segment_size;
    void *pmc;    // counter slot whose read packet this is (pmc.h)
    // ours is that counter slot's own signal, which the GPU completes
    // itself: it is neither passed on nor re-armed here (pmc.cpp re-arms
    // it when the slot is used again).
    bool slot_end;
    bool counted; // a dispatch with counters: recorded even without kernel trace
    std::atomic<uint32_t> waited; // an app thread waits for it (shim_queue_assist)
    // Who records this entry (crash hand-off, see "fatal signals" below):
    // the entry's FIFO index (low 32 bits) in the high half, and in the low
    // half 0 (nobody yet), the tid of the thread recording it, or kClaimDone.
    std::atomic<uint64_t> claim;
};

const uint32_t kClaimDone = 0xffffffffu;
const uint64_t kClaimSeq = 0xffffffff00000000ull;
inline uint64_t claim_seq(uint64_t index) { return (uint64_t)(uint32_t)index << 32; }

// GPU ticks -> the runtime's system timestamps, the affine map a fatal-signal
// handler converts with (it may not call the runtime, which locks):
// ns = ns0 + (tick - tick0) * mult / 2^32. Two copies, the index flips after
// the idle one is rewritten (under the queue's proc lock).
struct TickMap {
    uint64_t tick0;
    uint64_t ns0;
    uint64_t mult; // 32.32 fixed point, system ticks per GPU tick
};

// Who reserved one slot of an intercept queue (slot index + 1 in `index`,
// written last; 0: never). A slot's tag is read before the runtime can hand
// the slot's index out again (reservations stay within the queue's size of
// its read index, which passes a slot only after its callback).
struct Tag {
    std::atomic<uint64_t> index;
    std::atomic<uint64_t> correlation_id; // 0: none on the reserving thread
    std::atomic<uint64_t> stream_id;
    std::atomic<uint32_t> tid;
};
struct TagValue {
    uint64_t correlation_id, stream_id;
    uint32_t tid;
};

struct Queue {
    hsa_queue_t *queue; // the intercept queue the app uses
    hsa_agent_t agent;
    uint32_t node;
    uint64_t id;
    Pending *ring;
    Tag *tags;  // by slot index & mask, as ring
    uint64_t mask;
    uint64_t hw_size; // packets the hardware queue holds
    std::atomic<uint64_t> head{0}; // next entry the completion thread handles
    std::atomic<uint64_t> tail{0}; // next free entry
    std::atomic<uint32_t> sleeping{0};
    std::atomic<bool> stopping{false};
    // The runtime is destroying the queue: the thread only kicks the shared
    // queue event through `kick` (kick_shared_queue_event) until stopping.
    std::atomic<bool> destroying{false};
    hsa_signal_t kick{0};
    pthread_mutex_t lock; // producers: callbacks may come from several threads
    // Whoever completes entries and advances head holds it: the completion
    // thread, or an app thread finishing the entries its wait ends with.
    pthread_mutex_t proc;
    std::atomic<int> assists{0}; // app threads holding this queue (assist)
    std::atomic<uint64_t> last_assist_ns{0}; // when an app thread last finished entries
    pthread_t thread;
    TickMap tmap[2];
    std::atomic<uint32_t> tmap_idx{0};
    bool tmap_ok; // tmap holds a map (from the agent's conversion at creation)
    bool tmap_checked; // ROCPROF_GO_SHIM_DEBUG: the map's error was printed
    bool tmap_real; // anchored on a recorded dispatch (not only the creation's conversion)
};

const int kMaxQueues = 1024;
Queue *g_queues[kMaxQueues];
int g_nqueues;
pthread_mutex_t g_queues_lock = PTHREAD_MUTEX_INITIALIZER;
std::atomic<uint64_t> g_dispatch_id{0};
std::atomic<uint64_t> g_queue_id{0};
// Bumped whenever g_queues changes: invalidates the threads' cached lookups.
std::atomic<uint64_t> g_queues_gen{1};
uint64_t g_tick_per_second = 1000000000ull;

// Regression-test hook for the completion thread's wake-ups (issue #5,
// test/reliability/wakeup_test.go): ROCPROF_GO_TEST_PUBLISH_DELAY_US makes
// the callback sleep between deciding whether to wake the completion thread
// and publishing its entries — the window in which the thread may drain the
// FIFO and go to sleep — so that a lost wake-up shows every time. 0 (unset)
// in normal runs: one predictable branch per callback.
long g_test_publish_delay_us;
// Test hook (test/reliability, crash tests): ROCPROF_GO_TEST_COMPLETION_HOLD=1
// keeps the completion threads from completing anything until their queue
// stops, so that every completed dispatch is left to the fatal-signal handler.
bool g_test_hold;
bool g_crash_debug; // ROCPROF_GO_SHIM_DEBUG
// Fatal-signal handlers walking the queues right now: a queue is not freed
// while any is (hook_queue_destroy waits, after unlisting it).
std::atomic<int> g_crash_readers{0};

decltype(hsa_queue_create) *g_next_queue_create;
decltype(hsa_queue_destroy) *g_next_queue_destroy;

void wake(Queue *q)
{
    if (q->sleeping.load(std::memory_order_seq_cst)) {
        q->sleeping.store(0, std::memory_order_seq_cst);
        shim_futex(&q->sleeping, FUTEX_WAKE_PRIVATE, 1);
    }
}

// Records an entry whose signal has completed and passes the completion on
// to the app's signal; returns the interrupt signal to recycle (after head
// has moved past the entry: recycle_signal), or none.
// The handler's conversion (no call, no lock).
inline uint64_t tick_map_apply(const TickMap *m, uint64_t tick)
{
    if (tick >= m->tick0)
        return m->ns0 + (uint64_t)(((unsigned __int128)(tick - m->tick0) * m->mult) >> 32);
    return m->ns0 - (uint64_t)(((unsigned __int128)(m->tick0 - tick) * m->mult) >> 32);
}

// Moves the map's anchor to a conversion the runtime just made (under
// q->proc, the only writer), at most every kReanchorNs: the runtime
// re-synchronises its GPU/CPU clock pair as time goes on, and the handler
// converts ticks near the anchor.
const uint64_t kReanchorNs = 100 * 1000 * 1000;
inline void reanchor(Queue *q, uint64_t tick, uint64_t ns)
{
    uint32_t i = q->tmap_idx.load(std::memory_order_relaxed);
    const TickMap *m = &q->tmap[i];
    if (__builtin_expect(g_crash_debug, 0) && q->tmap_ok && !q->tmap_checked) {
        fprintf(stderr, "rocprof-go shim: queue %llu: tick map off by %+lld ns %.3f s from its anchor\n",
                (unsigned long long)q->id, (long long)(tick_map_apply(m, tick) - ns),
                double((int64_t)(ns - m->ns0)) / 1e9);
        q->tmap_checked = true;
    }
    if ((__builtin_expect(ns - m->ns0 < kReanchorNs, 1) && q->tmap_real) || !q->tmap_ok || !tick ||
        !ns)
        return;
    TickMap *w = &q->tmap[i ^ 1];
    w->mult = m->mult;
    if (q->tmap_real && tick > m->tick0 && ns > m->ns0) // the slope between two real conversions
        w->mult = (uint64_t)(((unsigned __int128)(ns - m->ns0) << 32) / (tick - m->tick0));
    w->tick0 = tick;
    w->ns0 = ns;
    q->tmap_real = true;
    q->tmap_idx.store(i ^ 1, std::memory_order_release);
}

// dispatch_rec fills a dispatch record from its queue entry, all but the
// timestamps (the completion thread asks ROCR for them; a fatal signal's
// handler converts the signal's ticks itself). Async-signal-safe.
void dispatch_rec(rpg_kernel_dispatch_rec *r, const Queue *q, const Pending *p)
{
    memset(r, 0, sizeof *r);
    shim_kernel_info k{0, 0, 0, 0, 0};
    shim_kmap_get(p->kernel_object, &k);
    r->agent_node = q->node;
    r->tid = p->tid;
    r->queue_id = q->id;
    r->stream_id = p->stream_id;
    r->dispatch_id = p->dispatch_id;
    r->kernel_id = k.kernel_id;
    r->correlation_id = p->correlation_id;
    for (int i = 0; i < 3; i++) {
        r->grid[i] = p->grid[i];
        r->workgroup[i] = p->wg[i];
    }
    r->group_segment_size = p->group_segment_size;
    r->private_segment_size = p->private_segment_size;
    r->packet_index = (uint32_t)p->packet_index;
    r->vgpr_count = k.vgpr_count;
    r->agpr_count = k.agpr_count;
    r->sgpr_count = k.sgpr_count;
}

hsa_signal_t complete(Queue *q, Pending *p, uint32_t self)
{
    uint64_t claim = p->claim.load(std::memory_order_relaxed);
    if (p->dispatch_id && ((rpg_domains & RPG_DOMAIN_KERNEL) || p->counted) &&
        // A fatal signal's handler may have recorded it already (or be doing so).
        (uint32_t)claim == 0 &&
        p->claim.compare_exchange_strong(claim, claim | self, std::memory_order_acq_rel,
                                         std::memory_order_relaxed)) {
        rpg_kernel_dispatch_rec r;
        dispatch_rec(&r, q, p);
        hsa_amd_profiling_dispatch_time_t t{0, 0};
        shim_amd.hsa_amd_profiling_get_dispatch_time_fn(q->agent, p->ours, &t);
        r.start_ns = t.start;
        r.end_ns = t.end;
        rpg_record_kernel_dispatch(&r);
        p->claim.store((claim & kClaimSeq) | kClaimDone, std::memory_order_release);
        __atomic_fetch_add(&shim_counters.dispatches_recorded, 1, __ATOMIC_RELAXED);
        reanchor(q, ((const amd_signal_t *)(uintptr_t)p->ours.handle)->end_ts, t.end);
    } else if ((uint32_t)claim == 0) {
        // Not recorded here (not a traced dispatch): nobody may take it from
        // now on, since head moves past it and the slot will be reused.
        p->claim.store((claim & kClaimSeq) | kClaimDone, std::memory_order_relaxed);
    }
    if (p->pmc)
        shim_pmc_complete(p->pmc); // before the app (or the next profiled dispatch) sees it
    if (p->app.handle) {
        // The packet processor would have written its timestamps into the
        // app's signal (amd_signal_t, the handle's target) before the
        // decrement; the app may read them (hsa_amd_profiling_get_dispatch_time).
        const amd_signal_t *o = (const amd_signal_t *)(uintptr_t)p->ours.handle;
        amd_signal_t *a = (amd_signal_t *)(uintptr_t)p->app.handle;
        a->start_ts = o->start_ts;
        a->end_ts = o->end_ts;
        shim_core.hsa_signal_subtract_screlease_fn(p->app, 1);
    }
    if (p->pmc)
        shim_pmc_release(p->pmc); // its signal is 0 now: the slot may be reused
    if (p->slot_end)
        return hsa_signal_t{0}; // the slot's signal: pmc.cpp re-arms it at the slot's next use
    if (p->interrupt)
        return p->ours;
    shim_core.hsa_signal_silent_store_relaxed_fn(p->ours, 1);
    return hsa_signal_t{0};
}

// An app thread that waits may still be waiting on a completed entry's
// signal (it looked it up before the completion): while any does, recycled
// signals wait here instead of going back to the pool, where a new packet
// could take one and keep that thread waiting for the wrong packet.
std::atomic<int> g_assists_in_flight{0};
SignalStack g_retired;

void recycle_signal(hsa_signal_t s)
{
    if (!s.handle)
        return;
    if (g_assists_in_flight.load(std::memory_order_seq_cst) == 0) {
        pool_put(s);
        return;
    }
    pthread_mutex_lock(&g_retired.lock);
    (void)g_retired.push_locked(s); // out of memory: leak it rather than hand it out early
    pthread_mutex_unlock(&g_retired.lock);
}

void flush_retired()
{
    pthread_mutex_lock(&g_retired.lock);
    while (g_retired.n && g_assists_in_flight.load(std::memory_order_seq_cst) == 0)
        pool_put(g_retired.v[--g_retired.n]);
    pthread_mutex_unlock(&g_retired.lock);
}

// Sleeps until a producer wakes us or ns pass.
void nap(Queue *q, long ns)
{
    struct timespec ts = {0, ns};
    q->sleeping.store(1, std::memory_order_seq_cst);
    shim_futex(&q->sleeping, FUTEX_WAIT_PRIVATE, 1, &ts);
    q->sleeping.store(0, std::memory_order_relaxed);
}

// ROCr 5.2.3 can lose the wake-up that ends hsa_queue_destroy. ~AqlQueue
// stores a value into the queue's inactive signal and sleeps until the
// async-events thread's handler stores another one. Every AQL queue's
// inactive signal shares one event (AqlQueue::queue_event_, a static), and
// the async-events thread sleeps on that event too. Suppose the handler's
// store sets the event while neither sleeps (the destroying thread was
// preempted between testing the value and going to sleep). The event then
// stays set for one waiter, and the async-events thread may consume it
// first: the destroying thread then sleeps for ever on a value that has
// already changed. Seen 1 in ~100-200 runs of 64 threads creating and
// destroying streams (docs/shim.md).
//
// The cure is a kick: any set of that event wakes every sleeper on it, and
// each tests its value again. The completion thread of a queue being
// destroyed kicks every g_kick_ns until the runtime's destroy returns (a
// destroy that returns sooner is never kicked). The destroyed queue's own
// signal cannot be the kicked one: the runtime frees it at the end of the
// destroy, and this runtime is built with assertions, so touching it a
// moment too late aborts the app (TestQueueDestroyKicksAreHarmless caught
// exactly that). The kick therefore goes through a queue of the shim's own,
// created on first need and destroyed at hsa_shut_down (made again if a
// queue is destroyed after an hsa_shut_down that left the runtime up;
// release_before_shut_down): a compare-and-swap
// of its inactive signal with its own value changes nothing, but the
// runtime then sets the signal's event, the shared one, whenever its
// async-events thread is waiting, which is nearly always.
// ROCPROF_GO_TEST_DESTROY_KICK_US (test hook, test/reliability) shortens the
// interval so that every destroy is kicked, and notes the first kick on
// stderr.
long g_kick_ns = 20 * 1000 * 1000;
bool g_test_kick_note;
int g_kick_noted;
pthread_mutex_t g_kick_lock = PTHREAD_MUTEX_INITIALIZER;
hsa_queue_t *g_kick_queue; // nullptr until needed; destroyed at hsa_shut_down

// The kick queue's inactive signal, the queue made on `agent` if need be
// (before the first destroy, while the runtime is certainly alive).
hsa_signal_t kick_signal(hsa_agent_t agent)
{
    pthread_mutex_lock(&g_kick_lock);
    if (!g_kick_queue) {
        uint32_t size = 0;
        if (shim_core.hsa_agent_get_info_fn(agent, HSA_AGENT_INFO_QUEUE_MIN_SIZE, &size) !=
                HSA_STATUS_SUCCESS ||
            size == 0)
            size = 4096;
        if (g_next_queue_create(agent, size, HSA_QUEUE_TYPE_SINGLE, nullptr, nullptr, UINT32_MAX,
                                UINT32_MAX, &g_kick_queue) != HSA_STATUS_SUCCESS)
            g_kick_queue = nullptr;
    }
    hsa_signal_t sig = {0};
    if (g_kick_queue)
        sig = reinterpret_cast<const amd_queue_t *>(g_kick_queue)->queue_inactive_signal;
    pthread_mutex_unlock(&g_kick_lock);
    return sig;
}

void kick_shared_queue_event(Queue *q)
{
    hsa_signal_value_t v = shim_core.hsa_signal_load_relaxed_fn(q->kick);
    shim_core.hsa_signal_cas_relaxed_fn(q->kick, v, v);
    if (__builtin_expect(g_test_kick_note, 0) &&
        !__atomic_exchange_n(&g_kick_noted, 1, __ATOMIC_RELAXED)) {
        static const char note[] = "rocprof-go: test: a queue destroy was kicked\n";
        (void)!write(2, note, sizeof note - 1);
    }
}

// How long the completion thread leaves a new app-visible entry to an app
// thread's wait (shim_queue_assist) before it waits on it itself, and how
// long it naps meanwhile.
const uint64_t kAssistGraceNs = 50000;
const long kAssistNapNs = 50000;
// After its last entry, the completion thread naps kLingerNapNs at a time
// for kLingerNs before it sleeps until woken.
const uint64_t kLingerNs = 20 * 1000 * 1000;
const long kLingerNapNs = 200000;
// While app threads have been finishing this queue's packets (within
// kAssistedNs), both naps are kAssistedNapNs instead: the packets are theirs
// to finish, and each wake-up of this thread competes with them for a CPU
// (on the virtual GPU also with the GPU's own thread). A kernel followed by
// hipDeviceSynchronize, 10 paired rounds: 24.7 us per step against 34.7 us
// with the short naps (bare 19.1 us).
const uint64_t kAssistedNs = 100 * 1000 * 1000;
const long kAssistedNapNs = 1000000;

bool assisted(const Queue *q, uint64_t now)
{
    return now - q->last_assist_ns.load(std::memory_order_relaxed) < kAssistedNs;
}

// Packets the app can observe (they carry its signal) use interrupt signals,
// so this thread can block on them and hand the app its completion at once.
// The others use memory-only signals: the GPU completes them without an
// interrupt, and this thread polls them with a backoff, since nobody is
// waiting for them.
void *completion_thread(void *arg)
{
    Queue *q = (Queue *)arg;
    // Signals meant for the process go to the app's threads, not here: a
    // fatal one's handler then never interrupts this thread mid-record.
    sigset_t async;
    sigemptyset(&async);
    static const int kAsync[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM};
    for (int sig : kAsync)
        sigaddset(&async, sig);
    pthread_sigmask(SIG_BLOCK, &async, nullptr);
    uint32_t self = rpg_tid();
    uint64_t scan = 0;    // entries in [head, scan) are known not app-visible
    uint64_t seen = ~0ull; // the app-visible entry this thread last found pending
    uint64_t seen_ns = 0;  // and when
    uint64_t last_work = 0; // when this thread last found an entry
    long backoff = 0;
    for (;;) {
        // App threads may advance head too (shim_queue_assist).
        uint64_t head = q->head.load(std::memory_order_acquire);
        uint64_t now = rpg_now();
        uint64_t tail = q->tail.load(std::memory_order_acquire);
        if (__builtin_expect(g_test_hold, 0) && !q->stopping.load()) {
            nap(q, 1000000); // test hook: completions are left to a fatal signal's handler
            continue;
        }
        if (head == tail) {
            if (q->stopping.load())
                break;
            if (q->destroying.load()) {
                nap(q, g_kick_ns);
                if (!q->stopping.load() && q->kick.handle)
                    kick_shared_queue_event(q);
                continue;
            }
            // Idle: timed naps for a while (new entries are found without a
            // wake-up; an app that synchronises after every step keeps this
            // thread here), then asleep until woken (2): every producer then
            // wakes us.
            if (now - last_work < kLingerNs) {
                nap(q, assisted(q, now) ? kAssistedNapNs : kLingerNapNs);
                continue;
            }
            q->sleeping.store(2, std::memory_order_seq_cst);
            if (q->tail.load(std::memory_order_seq_cst) == head && !q->stopping.load())
                shim_futex(&q->sleeping, FUTEX_WAIT_PRIVATE, 2);
            q->sleeping.store(0, std::memory_order_relaxed);
            continue;
        }
        last_work = now;
        Pending *p = &q->ring[head & q->mask];
        if (shim_core.hsa_signal_load_scacquire_fn(p->ours) < 1) {
            hsa_signal_t done{0};
            pthread_mutex_lock(&q->proc);
            if (q->head.load(std::memory_order_relaxed) == head) {
                done = complete(q, p, self);
                q->head.store(head + 1, std::memory_order_release);
            }
            pthread_mutex_unlock(&q->proc);
            recycle_signal(done);
            backoff = 0;
            continue;
        }
        if (q->stopping.load())
            break;
        // Not done: block on the first app-visible packet, if any (it
        // completes after the head on an in-order queue), else poll.
        if (scan < head)
            scan = head;
        while (scan != tail && !q->ring[scan & q->mask].interrupt)
            scan++;
        uint64_t i = scan;
        if (i != tail) {
            // An app thread that waits for it finishes it (and everything
            // before it) itself, at once; the runtime's wait here would spin
            // beside it for up to 200 us, taking the CPU that app thread, or
            // on the virtual GPU the GPU itself, needs. So first give the app
            // kAssistGraceNs to show up, and leave the entry to it if it does.
            if (i != seen) {
                seen = i;
                seen_ns = now;
            }
            if (q->ring[i & q->mask].waited.load(std::memory_order_acquire) ||
                now - seen_ns < kAssistGraceNs) {
                nap(q, assisted(q, now) ? kAssistedNapNs : kAssistNapNs);
                continue;
            }
            shim_core.hsa_signal_wait_scacquire_fn(q->ring[i & q->mask].ours,
                                                   HSA_SIGNAL_CONDITION_LT, 1,
                                                   g_tick_per_second / 10, HSA_WAIT_STATE_BLOCKED);
            continue;
        }
        if (backoff < 16) {
            backoff++;
            __builtin_ia32_pause();
            continue;
        }
        long ns = backoff < 16 + 7 ? 20000l << (backoff - 16) : 2000000l;
        backoff++;
        nap(q, ns);
    }
    return nullptr;
}

Queue *find_queue(const hsa_queue_t *hq);

// ---- slot tags: who reserved each slot -----------------------------------------

// The calling thread's last lookup (valid while g_queues_gen is unchanged):
// a thread mostly submits to one queue, so the lookup takes no lock.
thread_local const hsa_queue_t *t_last_hq;
thread_local Queue *t_last_q;
thread_local uint64_t t_last_gen;

Queue *queue_of(const hsa_queue_t *hq)
{
    uint64_t gen = g_queues_gen.load(std::memory_order_acquire);
    if (hq == t_last_hq && gen == t_last_gen)
        return t_last_q;
    Queue *q = find_queue(hq);
    t_last_hq = hq;
    t_last_q = q;
    t_last_gen = gen;
    return q;
}

// On the reserving thread, right after slots [first, first+n) of hq were
// reserved and before their packets can be written.
void tag_slots(const hsa_queue_t *hq, uint64_t first, uint64_t n)
{
    if (!n || (!(rpg_domains & (RPG_DOMAIN_KERNEL | RPG_DOMAIN_COUNTER)) && !shim_pmc_on))
        return;
    Queue *q = queue_of(hq);
    if (!q)
        return;
    uint64_t corr = rpg_correlation_current(), stream = shim_hip_stream();
    uint32_t tid = rpg_tid();
    if (n > q->mask + 1)
        n = q->mask + 1;
    for (uint64_t i = first; i != first + n; i++) {
        Tag *g = &q->tags[i & q->mask];
        g->index.store(0, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        g->correlation_id.store(corr, std::memory_order_relaxed);
        g->stream_id.store(stream, std::memory_order_relaxed);
        g->tid.store(tid, std::memory_order_relaxed);
        g->index.store(i + 1, std::memory_order_release);
    }
}

// Copies the tag of the slot with this index, if its reservation was seen.
// Reservations run at most a queue length (plus one slot per thread waiting
// for room) ahead of the read index and the tags hold at least two, so a
// tag is not reused before it is read; the second look at the index keeps a
// pathological app (more threads waiting than slots) from mixing two tags.
bool slot_tag(Queue *q, uint64_t index, TagValue *out)
{
    const Tag *g = &q->tags[index & q->mask];
    if (g->index.load(std::memory_order_acquire) != index + 1)
        return false;
    out->correlation_id = g->correlation_id.load(std::memory_order_relaxed);
    out->stream_id = g->stream_id.load(std::memory_order_relaxed);
    out->tid = g->tid.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    return g->index.load(std::memory_order_relaxed) == index + 1;
}

#define RPG_ADD_WRITE_INDEX_HOOK(order)                                                        \
    decltype(hsa_queue_add_write_index_##order) *g_next_add_##order;                           \
    uint64_t hook_add_##order(const hsa_queue_t *hq, uint64_t n)                               \
    {                                                                                          \
        uint64_t first = g_next_add_##order(hq, n);                                            \
        tag_slots(hq, first, n);                                                               \
        return first;                                                                          \
    }
#define RPG_CAS_WRITE_INDEX_HOOK(order)                                                        \
    decltype(hsa_queue_cas_write_index_##order) *g_next_cas_##order;                           \
    uint64_t hook_cas_##order(const hsa_queue_t *hq, uint64_t expected, uint64_t value)        \
    {                                                                                          \
        uint64_t old = g_next_cas_##order(hq, expected, value);                                \
        if (old == expected && value > expected)                                               \
            tag_slots(hq, expected, value - expected);                                         \
        return old;                                                                            \
    }
RPG_ADD_WRITE_INDEX_HOOK(scacq_screl)
RPG_ADD_WRITE_INDEX_HOOK(scacquire)
RPG_ADD_WRITE_INDEX_HOOK(relaxed)
RPG_ADD_WRITE_INDEX_HOOK(screlease)
RPG_CAS_WRITE_INDEX_HOOK(scacq_screl)
RPG_CAS_WRITE_INDEX_HOOK(scacquire)
RPG_CAS_WRITE_INDEX_HOOK(relaxed)
RPG_CAS_WRITE_INDEX_HOOK(screlease)

// ---- the intercept callback ------------------------------------------------------

thread_local hsa_kernel_dispatch_packet_t *t_buf;
thread_local uint64_t *t_slots; // slot index of each dispatch packet, in order
thread_local uint64_t t_buf_cap;
// PC sampling (pcs.cpp): the packets with a marker before each dispatch,
// and each packet's dispatch id (0: no dispatch).
thread_local hsa_kernel_dispatch_packet_t *t_pcs_buf;
thread_local uint64_t *t_pcs_ids;
thread_local uint64_t t_pcs_cap;

// Puts an intercept marker before every dispatch of buf[0..count) for PC
// sampling; returns the packets to write (buf itself when out of memory).
hsa_kernel_dispatch_packet_t *pcs_mark(Queue *q, hsa_kernel_dispatch_packet_t *buf, uint64_t *count)
{
    uint64_t n = *count, out = 0;
    if (t_pcs_cap < 2 * n) {
        void *b = realloc(t_pcs_buf, 2 * n * sizeof *t_pcs_buf);
        if (!b)
            return buf;
        t_pcs_buf = (hsa_kernel_dispatch_packet_t *)b;
        t_pcs_cap = 2 * n;
    }
    for (uint64_t i = 0; i < n; i++) {
        if (t_pcs_ids[i])
            shim_pcs_fill_marker(&t_pcs_buf[out++], t_pcs_ids[i], q->node);
        t_pcs_buf[out++] = buf[i];
    }
    *count = out;
    return t_pcs_buf;
}

// The intercept callback. The 5.2.3 runtime lets it call writer only once.
// pkts are the slots from user_index on (5.2.3 passes one at a time).
void intercept(const void *pkts, uint64_t count, uint64_t user_index, void *data,
               hsa_amd_queue_intercept_packet_writer writer)
{
    Queue *q = (Queue *)data;
    if (!(rpg_domains & (RPG_DOMAIN_KERNEL | RPG_DOMAIN_COUNTER)) && !shim_pmc_on) {
        writer(pkts, count);
        return;
    }
    if (t_buf_cap < count) {
        uint64_t cap = count < 64 ? 64 : count;
        void *b = realloc(t_buf, cap * sizeof *t_buf);
        if (b)
            t_buf = (hsa_kernel_dispatch_packet_t *)b;
        void *s = b ? realloc(t_slots, cap * sizeof *t_slots) : nullptr;
        if (s)
            t_slots = (uint64_t *)s;
        if (!b || !s) {
            writer(pkts, count);
            return;
        }
        t_buf_cap = cap;
    }
    memcpy(t_buf, pkts, count * sizeof *t_buf);
    // Counter collection may add packets around dispatches, never dispatches:
    // the n-th dispatch of the expanded array is the n-th one here.
    uint64_t ndispatch = 0, nextdispatch = 0;
    for (uint64_t i = 0; i < count; i++)
        if (((t_buf[i].header >> HSA_PACKET_HEADER_TYPE) & 0xff) == HSA_PACKET_TYPE_KERNEL_DISPATCH)
            t_slots[ndispatch++] = user_index + i;
    uint64_t corr = 0, stream = 0;
    uint32_t tid = 0;
    pthread_mutex_lock(&q->lock);
    // Counter collection wraps selected dispatches in PMC packets (pmc.cpp).
    hsa_kernel_dispatch_packet_t *buf = t_buf;
    const ShimPmcTag *tags = nullptr;
    if (shim_pmc_on)
        count = shim_pmc_expand(q->agent, &buf, count, &tags);
    uint64_t tail = q->tail.load(std::memory_order_relaxed);
    bool pcs = __builtin_expect(shim_pcs_active, 0);
    if (pcs) {
        static thread_local uint64_t ids_cap;
        if (ids_cap < count) {
            void *b = realloc(t_pcs_ids, count * sizeof *t_pcs_ids);
            if (b) {
                t_pcs_ids = (uint64_t *)b;
                ids_cap = count;
            }
        }
        if (ids_cap < count)
            pcs = false;
        else
            memset(t_pcs_ids, 0, count * sizeof *t_pcs_ids);
    }
    if (__builtin_expect(g_test_publish_delay_us != 0, 0)) {
        struct timespec ts = {g_test_publish_delay_us / 1000000,
                              g_test_publish_delay_us % 1000000 * 1000};
        nanosleep(&ts, nullptr);
    }
    for (uint64_t i = 0; i < count; i++) {
        hsa_kernel_dispatch_packet_t *k = &buf[i];
        uint32_t type = (k->header >> HSA_PACKET_HEADER_TYPE) & 0xff;
        bool dispatch = type == HSA_PACKET_TYPE_KERNEL_DISPATCH;
        if (type == HSA_PACKET_TYPE_INVALID)
            continue;
        // Every packet gets a signal of ours (all packet types keep it at
        // byte 56), so the FIFO bounds what is on the hardware queue. The
        // 5.2.3 intercept queue asserts ("overflow buffer not empty") when the
        // hardware queue fills, so wait here for the completion thread
        // instead; two slots stay free for the runtime's retry barrier.
        while (tail - q->head.load(std::memory_order_acquire) + 2 >= q->hw_size) {
            // Publish what we have so the completion thread can see it.
            q->tail.store(tail, std::memory_order_release);
            wake(q);
            struct timespec ts = {0, 20000};
            nanosleep(&ts, nullptr);
        }
        Pending *p = &q->ring[tail & q->mask];
        // A counted dispatch's last packet (its read) completes its counter
        // slot's signal, which the next counted dispatch's barrier waits for:
        // the GPU completes it directly. Through a signal of ours that the
        // completion thread passes on, each counted dispatch waited on the
        // GPU for this thread to wake up, decode and pass it on (the virtual
        // GPU spent ~60 us of CPU per counted dispatch polling that barrier).
        // The entry still tells the completion thread when to decode.
        bool slot_end = tags && tags[i].complete;
        bool visible = k->completion_signal.handle != 0 && !slot_end;
        hsa_signal_t ours{0};
        if (slot_end) {
            ours = k->completion_signal;
        } else if (visible) {
            ours = pool_get();
        } else {
            if (!p->slot_signal.handle &&
                shim_amd.hsa_amd_signal_create_fn(1, 0, nullptr, HSA_AMD_SIGNAL_AMD_GPU_ONLY,
                                                  &p->slot_signal) != HSA_STATUS_SUCCESS)
                p->slot_signal.handle = 0;
            ours = p->slot_signal;
        }
        if (!ours.handle)
            continue; // out of signals: this packet goes untraced, unchanged
        p->ours = ours;
        p->claim.store(claim_seq(tail), std::memory_order_relaxed);
        p->interrupt = visible;
        p->slot_end = slot_end;
        p->waited.store(0, std::memory_order_relaxed);
        p->app = slot_end ? hsa_signal_t{0} : k->completion_signal;
        p->dispatch_id = 0;
        p->pmc = tags ? tags[i].complete : nullptr;
        p->counted = tags && tags[i].bind;
        if (dispatch) {
            TagValue g;
            p->packet_index = nextdispatch < ndispatch ? t_slots[nextdispatch] : user_index + i;
            if (nextdispatch < ndispatch && slot_tag(q, t_slots[nextdispatch++], &g)) {
                // The thread and HIP call that reserved the slot.
                p->correlation_id = g.correlation_id ? g.correlation_id : rpg_correlation_next();
                p->stream_id = g.stream_id;
                p->tid = g.tid;
            } else {
                // Reserved unseen (e.g. the write index stored directly): the
                // thread handing it over is the best guess.
                if (!tid) {
                    tid = rpg_tid();
                    corr = shim_correlation();
                    stream = shim_hip_stream();
                }
                p->correlation_id = corr;
                p->stream_id = stream;
                p->tid = tid;
            }
            p->dispatch_id = g_dispatch_id.fetch_add(1, std::memory_order_relaxed) + 1;
            if (pcs)
                t_pcs_ids[i] = p->dispatch_id;
            p->kernel_object = k->kernel_object;
            p->grid[0] = k->grid_size_x;
            p->grid[1] = k->grid_size_y;
            p->grid[2] = k->grid_size_z;
            p->wg[0] = k->workgroup_size_x;
            p->wg[1] = k->workgroup_size_y;
            p->wg[2] = k->workgroup_size_z;
            p->group_segment_size = k->group_segment_size;
            p->private_segment_size = k->private_segment_size;
            if (p->counted)
                shim_pmc_bind(tags[i].bind, p->dispatch_id);
        }
        k->completion_signal = ours;
        tail++;
    }
    // Publish before the packets reach the hardware queue: the completion
    // thread must know an entry before its signal can fire.
    q->tail.store(tail, std::memory_order_seq_cst);
    pthread_mutex_unlock(&q->lock);
    // Only a completion thread asleep until woken (2) needs a wake-up (a
    // syscall, and a thread to schedule beside the app's): in its timed naps
    // (1) it finds new entries by itself, and an app thread that waits for a
    // packet finishes it without this thread (shim_queue_assist). Tested
    // after publishing, against the thread's own store of 2 before it looks
    // at tail once more: one of the two always sees the other.
    if (q->sleeping.load(std::memory_order_seq_cst) == 2)
        wake(q);
    if (pcs) // markers are not put on the hardware queue: the FIFO is unchanged
        buf = pcs_mark(q, buf, &count);
    writer(buf, count);
}

Queue *find_queue(const hsa_queue_t *hq)
{
    pthread_mutex_lock(&g_queues_lock);
    Queue *r = nullptr;
    for (int i = 0; i < g_nqueues; i++)
        if (g_queues[i] && g_queues[i]->queue == hq)
            r = g_queues[i];
    pthread_mutex_unlock(&g_queues_lock);
    return r;
}

// Queues the shim does not intercept (kernel tracing and counters off) still
// get an id, from the same counter, while scratch events are traced: the
// runtime names the queue in each event (scratch.cpp). Under g_queues_lock.
struct PlainQueue {
    const hsa_queue_t *queue;
    uint64_t id;
    uint32_t node;
};
PlainQueue g_plain[kMaxQueues];
int g_nplain;

hsa_status_t create_plain(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                          void (*callback)(hsa_status_t, hsa_queue_t *, void *), void *data,
                          uint32_t private_segment_size, uint32_t group_segment_size,
                          hsa_queue_t **queue)
{
    hsa_status_t st = g_next_queue_create(agent, size, type, callback, data, private_segment_size,
                                          group_segment_size, queue);
    if (st != HSA_STATUS_SUCCESS || !queue || !(rpg_domains & RPG_DOMAIN_SCRATCH_MEMORY))
        return st;
    const ShimAgent *a = shim_find_agent(agent);
    pthread_mutex_lock(&g_queues_lock);
    bool known = false; // the runtime's shared cooperative queue, handed out again
    for (int i = 0; i < g_nplain; i++)
        known |= g_plain[i].queue == *queue;
    if (!known && g_nplain < kMaxQueues)
        g_plain[g_nplain++] = {*queue, g_queue_id.fetch_add(1) + 1, a ? a->node : 0};
    pthread_mutex_unlock(&g_queues_lock);
    return st;
}

// Cooperative queues. The runtime hands out one cooperative queue per agent,
// shared and counted by the agent (GpuAgent's GWS queue: every creation
// returns it and adds a reference, every hsa_queue_destroy of it drops one,
// the last deletes it). An intercept queue made around it owns it outright
// instead (a unique_ptr in ROCR's QueueWrapper): destroying the intercept
// queue deletes the shared queue behind the agent's back, and the agent
// deletes it again in hsa_shut_down, which HIP 6 and later call from their
// exit-time destructors. Apps that made a cooperative launch under kernel
// tracing died of SIGSEGV inside ROCR at exit (features, ROCm 6.4 and 7.2;
// on 5.2, whose HIP never shuts the runtime down, a later cooperative queue
// would have been the freed one).
//
// So the shim takes a reference of its own, by the shared queue's own
// handle, before wrapping it (a second creation tells whether the runtime
// shares: it returns the same handle), hands the one intercept queue of the
// agent out for every creation, like the runtime, and at its last destroy
// leaves the intercept queue alone (it stays until exit: a few pages and two
// signals) and drops both references by the shared queue's handle: the agent
// then deletes the queue itself, as without the profiler. Leaving the intercept
// queue is what rocprofv3 does with all of its queues.
// TestTracedAppsExitCleanly (cmd/rocprof-go).
struct CoopQueue {
    hsa_agent_t agent;
    hsa_queue_t *wrapper; // the intercept queue the app holds
    hsa_queue_t *own;     // the runtime's shared queue, by its own handle
    int refs;             // the app's creations of it not yet destroyed
};
const int kMaxCoop = 64;
pthread_mutex_t g_coop_lock = PTHREAD_MUTEX_INITIALIZER; // taken before g_queues_lock
CoopQueue g_coop[kMaxCoop];
int g_ncoop;
thread_local bool t_coop_inner; // create_cooperative is making the intercept queue

hsa_status_t hook_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                               void (*callback)(hsa_status_t, hsa_queue_t *, void *), void *data,
                               uint32_t private_segment_size, uint32_t group_segment_size,
                               hsa_queue_t **queue);

hsa_status_t create_cooperative(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                                void (*callback)(hsa_status_t, hsa_queue_t *, void *), void *data,
                                uint32_t private_segment_size, uint32_t group_segment_size,
                                hsa_queue_t **queue)
{
    // The intercept queue around the runtime's queue, made by the usual hook.
    auto wrap = [&]() {
        t_coop_inner = true;
        hsa_status_t s = hook_queue_create(agent, size, type, callback, data, private_segment_size,
                                           group_segment_size, queue);
        t_coop_inner = false;
        return s;
    };
    pthread_mutex_lock(&g_coop_lock);
    for (int i = 0; i < g_ncoop; i++)
        if (g_coop[i].agent.handle == agent.handle) {
            g_coop[i].refs++;
            *queue = g_coop[i].wrapper;
            pthread_mutex_unlock(&g_coop_lock);
            return HSA_STATUS_SUCCESS;
        }
    hsa_queue_t *own = nullptr, *again = nullptr;
    hsa_status_t st = g_next_queue_create(agent, size, type, callback, data, private_segment_size,
                                          group_segment_size, &own);
    if (st != HSA_STATUS_SUCCESS) {
        pthread_mutex_unlock(&g_coop_lock);
        return st;
    }
    bool probed = g_next_queue_create(agent, size, type, nullptr, nullptr, private_segment_size,
                                      group_segment_size, &again) == HSA_STATUS_SUCCESS;
    if (probed)
        g_next_queue_destroy(again); // shared: back to the one reference held here
    if (g_crash_debug)
        fprintf(stderr, "rocprof-go shim: cooperative queue: %s\n",
                !probed ? "unknown (untraced)" : again == own ? "shared by the runtime" : "not shared");
    if (!probed || again != own) {
        // Not shared (each intercept queue owns its queue), or unknown: no
        // reference to keep. Unknown runs untraced rather than risk it.
        g_next_queue_destroy(own);
        pthread_mutex_unlock(&g_coop_lock);
        if (!probed)
            return g_next_queue_create(agent, size, type, callback, data, private_segment_size,
                                       group_segment_size, queue);
        return wrap();
    }
    st = wrap();
    if (st == HSA_STATUS_SUCCESS && *queue != own && g_ncoop < kMaxCoop)
        g_coop[g_ncoop++] = {agent, *queue, own, 1};
    else if (st != HSA_STATUS_SUCCESS || *queue == own)
        g_next_queue_destroy(own); // failed, or untraced (the shared queue itself)
    // else: more agents than kMaxCoop (not seen): the reference stays, so the
    // agent never deletes the queue the intercept queue will delete.
    pthread_mutex_unlock(&g_coop_lock);
    return st;
}

// Drops the two references on the shared queue (the shim's and the intercept
// queue's): the agent deletes it at the last.
hsa_status_t release_cooperative(hsa_queue_t *own)
{
    hsa_status_t st = g_next_queue_destroy(own);
    if (st == HSA_STATUS_SUCCESS)
        st = g_next_queue_destroy(own);
    if (g_crash_debug)
        fprintf(stderr, "rocprof-go shim: cooperative queue released (status 0x%x)\n", (unsigned)st);
    return st;
}

// The runtime's conversion of `agent`'s GPU ticks to system timestamps, as
// an affine map around the present, for the fatal-signal handler. It is made
// with the call that converts every recorded dispatch,
// hsa_amd_profiling_get_dispatch_time, on a signal of the shim's own whose
// start_ts/end_ts it sets. (hsa_amd_profiling_convert_tick_to_system_domain
// answers 2^63 + x on ROCR 5.2.3 until the runtime first re-synchronises its
// clocks: its two clock samples are equal, and 0/0 becomes an integer.) The
// runtime has no call for "the GPU's tick now". A pair of ticks far in the
// future makes the runtime re-synchronise and gives the rate; the rate
// places the present tick from the system clock, and a conversion there
// gives the anchor (ticks the runtime knows, so that ROCR prints no "time
// stamps may be invalid"). The first dispatch a completion thread records
// checks the map (ROCPROF_GO_SHIM_DEBUG prints the error), and every
// kReanchorNs a recorded dispatch becomes the new anchor (reanchor).
const uint64_t kMapSpan = 1ull << 26;
bool convert_pair(hsa_agent_t agent, hsa_signal_t s, uint64_t a, uint64_t b, uint64_t *sa,
                  uint64_t *sb)
{
    amd_signal_t *as = (amd_signal_t *)(uintptr_t)s.handle;
    as->start_ts = a;
    as->end_ts = b;
    hsa_amd_profiling_dispatch_time_t t{0, 0};
    hsa_status_t st = shim_amd.hsa_amd_profiling_get_dispatch_time_fn(agent, s, &t);
    as->start_ts = as->end_ts = 0;
    *sa = t.start;
    *sb = t.end;
    return st == HSA_STATUS_SUCCESS && t.end >= t.start && t.end - t.start < (1ull << 62);
}

bool tick_map_init(hsa_agent_t agent, TickMap *m)
{
    auto conv = shim_amd.hsa_amd_profiling_convert_tick_to_system_domain_fn;
    if (!shim_amd.hsa_amd_profiling_get_dispatch_time_fn || !conv)
        return false;
    hsa_signal_t s = pool_get();
    if (!s.handle)
        return false;
    const uint64_t kf = 1ull << 56, span = 1ull << 36;
    uint64_t s0 = 0, s1 = 0;
    // Each try re-synchronises the runtime's clocks. The pair comes out
    // reversed when the runtime re-synchronises between its two conversions
    // (about 1 try in 4 on ROCR 5.2.3): a new pair then lies on one line.
    bool synced = false;
    for (int i = 0; i < 8 && !synced; i++)
        synced = convert_pair(agent, s, kf - span, kf, &s0, &s1) && s1 > s0;
    pool_put(s);
    uint64_t sys_now = 0;
    if (!synced ||
        shim_core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP, &sys_now) != HSA_STATUS_SUCCESS)
        return false;
    (void)s0;
    // The runtime's line through its clock pairs: its slope from two ticks
    // far apart (the pair may be close together yet, so the slope is the
    // runtime's, not the clocks' true ratio, until later re-synchronisations:
    // reanchor follows those), then the present tick on it by Newton's method.
    const uint64_t ka = 1ull << 40, kb = 1ull << 41;
    uint64_t va = 0, vb = 0;
    if (conv(agent, ka, &va) != HSA_STATUS_SUCCESS || conv(agent, kb, &vb) != HSA_STATUS_SUCCESS ||
        vb <= va)
        return false;
    double rate = double(vb - va) / double(kb - ka);
    double t = double(ka) + (double(sys_now) - double(va)) / rate;
    for (int i = 0; i < 4 && t > 0 && t < 9.0e18; i++) {
        uint64_t v = 0;
        if (conv(agent, (uint64_t)t, &v) != HSA_STATUS_SUCCESS)
            return false;
        double d = (double(sys_now) - double(v)) / rate;
        t += d;
        if (d < 1 && d > -1)
            break;
    }
    if (!(t > double(kMapSpan) && t < 9.0e18))
        return false;
    uint64_t t0 = (uint64_t)t, a = 0, b = 0;
    if (conv(agent, t0, &a) != HSA_STATUS_SUCCESS ||
        conv(agent, t0 + kMapSpan, &b) != HSA_STATUS_SUCCESS || b <= a)
        return false;
    m->tick0 = t0;
    m->ns0 = a;
    m->mult = (uint64_t)(((unsigned __int128)(b - a) << 32) / kMapSpan);
    return m->mult != 0;
}

// ROCR's intercept queue registers its doorbell, an interrupt signal, with the
// runtime's async-events thread, and the signal takes its KFD event from the
// runtime's event pool: the event a destroyed signal gave back last. Such an
// event may have fired already (HIP's start-up completes signals and frees
// them), and the async-events loop of ROCR 6.4 and 7.2 waits on it passing
// age 1 every time; KFD returns at once from a wait whose age is not the
// event's, so that thread spins for as long as the queue lives. On the virtual
// GPU (which keeps KFD's age rule), 30,000 dispatches on 6.4 met 114,000-256,000
// such waits (41,000 on 7.2, 2,300 without the profiler) and 1.5-2 us of CPU per
// dispatch beside the app's and the GPU's threads (docs/performance.md). Holding
// the pool's events in signals of our own while the queue is made gives the
// doorbell an event nobody has fired (1,600 waits). They go back to the pool
// for the runtime's next signals: at most kPoolHold new events, once.
constexpr int kPoolHold = 64;

struct PoolHold {
    hsa_signal_t held[kPoolHold];
    int n = 0;
    PoolHold()
    {
        if (!shim_core.hsa_signal_create_fn || !shim_core.hsa_signal_destroy_fn)
            return;
        while (n < kPoolHold &&
               shim_core.hsa_signal_create_fn(1, 0, nullptr, &held[n]) == HSA_STATUS_SUCCESS)
            n++;
    }
    ~PoolHold()
    {
        for (int i = 0; i < n; i++)
            shim_core.hsa_signal_destroy_fn(held[i]);
    }
};

hsa_status_t hook_queue_create(hsa_agent_t agent, uint32_t size, hsa_queue_type32_t type,
                               void (*callback)(hsa_status_t, hsa_queue_t *, void *), void *data,
                               uint32_t private_segment_size, uint32_t group_segment_size,
                               hsa_queue_t **queue)
{
    if ((!(rpg_domains & (RPG_DOMAIN_KERNEL | RPG_DOMAIN_COUNTER)) && !shim_pmc_on) ||
        !shim_amd.hsa_amd_queue_intercept_create_fn ||
        !shim_amd.hsa_amd_queue_intercept_register_fn || !queue)
        return create_plain(agent, size, type, callback, data, private_segment_size,
                            group_segment_size, queue);
    if (type == HSA_QUEUE_TYPE_COOPERATIVE && !t_coop_inner)
        return create_cooperative(agent, size, type, callback, data, private_segment_size,
                                  group_segment_size, queue);
    hsa_status_t st;
    {
        PoolHold fresh_doorbell_event;
        st = shim_amd.hsa_amd_queue_intercept_create_fn(agent, size, type, callback, data,
                                                         private_segment_size, group_segment_size,
                                                         queue);
    }
    if (st != HSA_STATUS_SUCCESS) // a queue type the intercept layer refuses: run it untraced
        return create_plain(agent, size, type, callback, data, private_segment_size,
                            group_segment_size, queue);
    void *mem = calloc(1, sizeof(Queue));
    Queue *q = mem ? new (mem) Queue() : nullptr;
    uint64_t cap = 1024;
    while (cap < 2ull * size)
        cap <<= 1;
    if (q) {
        q->ring = (Pending *)calloc(cap, sizeof(Pending));
        q->tags = (Tag *)calloc(cap, sizeof(Tag)); // zero is a valid empty Tag
    }
    if (!q || !q->ring || !q->tags) {
        if (q) {
            free(q->ring);
            free(q->tags);
        }
        free(q);
        return st; // unprofiled but working
    }
    q->queue = *queue;
    q->agent = agent;
    const ShimAgent *a = shim_find_agent(agent);
    q->node = a ? a->node : 0;
    q->id = g_queue_id.fetch_add(1) + 1;
    q->mask = cap - 1;
    q->hw_size = size;
    pthread_mutex_init(&q->lock, nullptr);
    pthread_mutex_init(&q->proc, nullptr);
    q->tmap_ok = tick_map_init(agent, &q->tmap[0]);
    if (g_crash_debug)
        fprintf(stderr, "rocprof-go shim: queue %llu: tick map %s (%.9f system ticks per GPU tick)\n",
                (unsigned long long)q->id, q->tmap_ok ? "ok" : "unavailable",
                q->tmap_ok ? double(q->tmap[0].mult) / 4294967296.0 : 0.0);
    shim_amd.hsa_amd_profiling_set_profiler_enabled_fn(*queue, 1);
    if (pthread_create(&q->thread, nullptr, completion_thread, q) != 0) {
        free(q->ring);
        free(q->tags);
        free(q);
        return st;
    }
    pthread_setname_np(q->thread, "rpg-dispatch");
    if (shim_amd.hsa_amd_queue_intercept_register_fn(*queue, intercept, q) != HSA_STATUS_SUCCESS) {
        q->stopping.store(true);
        wake(q);
        pthread_join(q->thread, nullptr);
        free(q->ring);
        free(q->tags);
        free(q);
        return st;
    }
    pthread_mutex_lock(&g_queues_lock);
    if (g_nqueues < kMaxQueues) { // published for fatal-signal handlers, which take no lock
        __atomic_store_n(&g_queues[g_nqueues], q, __ATOMIC_RELEASE);
        __atomic_store_n(&g_nqueues, g_nqueues + 1, __ATOMIC_RELEASE);
    }
    g_queues_gen.fetch_add(1, std::memory_order_release);
    pthread_mutex_unlock(&g_queues_lock);
    __atomic_fetch_add(&shim_counters.queues_intercepted, 1, __ATOMIC_RELAXED);
    return st;
}

// Polls `done` every 100 us for up to 10 s: queue teardown waits for the
// shim's own work, but never hangs the app on it.
template <typename F> void wait_bounded(F done)
{
    for (int i = 0; i < 100000 && !done(); i++)
        usleep(100);
}

// The queue this thread is destroying: the runtime may report scratch freed
// while it tears the queue down (ROCR 7), after the shim forgot the queue.
thread_local PlainQueue t_destroying;

// Queue destroys under way: the kick queue (kick_signal) serves them, so
// release_before_shut_down leaves it while any is.
std::atomic<int> g_destroys_in_flight{0};

hsa_status_t hook_queue_destroy(hsa_queue_t *hq)
{
    struct InFlight {
        InFlight() { g_destroys_in_flight.fetch_add(1, std::memory_order_seq_cst); }
        ~InFlight() { g_destroys_in_flight.fetch_sub(1, std::memory_order_seq_cst); }
    } in_flight;
    t_destroying = {nullptr, 0, 0};
    shim_queue_identify(hq, &t_destroying.id, &t_destroying.node);
    t_destroying.queue = hq;
    // An intercepted cooperative queue (create_cooperative): the last destroy
    // drops the shared queue's references instead, under g_coop_lock.
    hsa_queue_t *coop_own = nullptr;
    pthread_mutex_lock(&g_coop_lock);
    for (int i = 0; i < g_ncoop; i++)
        if (g_coop[i].wrapper == hq) {
            if (--g_coop[i].refs > 0) {
                pthread_mutex_unlock(&g_coop_lock);
                t_destroying.queue = nullptr;
                return HSA_STATUS_SUCCESS; // still the app's elsewhere
            }
            coop_own = g_coop[i].own;
            g_coop[i] = g_coop[--g_ncoop];
            break;
        }
    if (!coop_own)
        pthread_mutex_unlock(&g_coop_lock);
    pthread_mutex_lock(&g_queues_lock);
    for (int i = 0; i < g_nplain; i++)
        if (g_plain[i].queue == hq) {
            g_plain[i] = g_plain[--g_nplain];
            break;
        }
    pthread_mutex_unlock(&g_queues_lock);
    Queue *q = find_queue(hq);
    if (q) {
        // Let everything submitted so far finish and be recorded first, but
        // never hang the app's teardown on a queue that stopped.
        wait_bounded([q] {
            return q->head.load(std::memory_order_acquire) ==
                   q->tail.load(std::memory_order_acquire);
        });
        pthread_mutex_lock(&g_queues_lock);
        for (int i = 0; i < g_nqueues; i++)
            if (g_queues[i] == q)
                __atomic_store_n(&g_queues[i], nullptr, __ATOMIC_SEQ_CST);
        g_queues_gen.fetch_add(1, std::memory_order_release);
        pthread_mutex_unlock(&g_queues_lock);
        q->kick = kick_signal(q->agent);
        q->destroying.store(true);
        wake(q);
    }
    hsa_status_t st = coop_own ? release_cooperative(coop_own) : g_next_queue_destroy(hq);
    t_destroying.queue = nullptr;
    if (q) {
        q->stopping.store(true);
        wake(q);
        pthread_join(q->thread, nullptr);
        // App threads still finishing entries of this queue, and fatal-signal
        // handlers that may have listed it before it was unlisted.
        wait_bounded([q] { return q->assists.load(std::memory_order_acquire) == 0; });
        wait_bounded([] { return g_crash_readers.load(std::memory_order_seq_cst) == 0; });
        for (uint64_t k = 0; k <= q->mask; k++)
            if (q->ring[k].slot_signal.handle)
                shim_core.hsa_signal_destroy_fn(q->ring[k].slot_signal);
        free(q->ring);
        free(q->tags);
        free(q);
    }
    if (coop_own)
        pthread_mutex_unlock(&g_coop_lock);
    return st;
}

decltype(hsa_amd_profiling_set_profiler_enabled) *g_next_set_profiler;
decltype(hsa_shut_down) *g_next_shut_down;

// ROCR's hsa_shut_down counts the signals still taken from its signal pool
// when it takes the runtime down ("Warning: Resource leak detected by
// SharedSignalPool, N Signals leaked." on the app's stderr). It calls the
// tools' OnUnload before that count, but ROCR 7.2 already answers every call
// there with HSA_STATUS_ERROR_NOT_INITIALIZED (0x100b), so what OnUnload
// destroys on 6.4 stayed allocated on 7.2: the pool's idle signals (copies'
// and packets' completion signals) and the kick queue's (the warning rose by
// 4 for `multistream 1 1`, 8 for 4 streams). Before the runtime's
// hsa_shut_down, the runtime still accepts every call, so the signals the
// shim holds only in reserve go back here: the pool's and the retired ones
// (when no app thread may still wait on one), and the kick queue while no
// destroy uses it. All of them are made again on demand, so an app that
// shuts down one of several hsa_init references, or goes on after a failed
// hsa_shut_down, keeps working; OnUnload (shim_queues_shutdown) still
// releases the rest where the runtime lets it.
void release_before_shut_down()
{
    pthread_mutex_lock(&g_kick_lock);
    if (g_kick_queue && g_destroys_in_flight.load(std::memory_order_seq_cst) == 0) {
        g_next_queue_destroy(g_kick_queue);
        g_kick_queue = nullptr;
    }
    pthread_mutex_unlock(&g_kick_lock);
    pthread_mutex_lock(&g_retired.lock);
    size_t kept = g_assists_in_flight.load(std::memory_order_seq_cst) ? g_retired.n : 0;
    for (size_t i = kept; i < g_retired.n; i++)
        shim_core.hsa_signal_destroy_fn(g_retired.v[i]);
    g_retired.n = kept;
    pthread_mutex_unlock(&g_retired.lock);
    pthread_mutex_lock(&g_pool.lock);
    for (size_t i = 0; i < g_pool.n; i++)
        shim_core.hsa_signal_destroy_fn(g_pool.v[i]);
    g_pool.n = 0;
    pthread_mutex_unlock(&g_pool.lock);
}

// The runtime's references as the shim sees them: the hsa_init that loaded
// it, and every later hsa_init and hsa_shut_down through the table (one
// racing the first from another thread goes unseen: PC sampling would then
// stop at the last shut-down but one, which nothing else depends on).
decltype(hsa_init) *g_next_init;
std::atomic<int> g_runtime_refs{1};

hsa_status_t hook_init()
{
    hsa_status_t st = g_next_init();
    if (st == HSA_STATUS_SUCCESS)
        g_runtime_refs.fetch_add(1, std::memory_order_relaxed);
    return st;
}

hsa_status_t hook_shut_down()
{
    if (g_crash_debug)
        fprintf(stderr, "rocprof-go shim: hsa_shut_down with %d runtime references\n",
                g_runtime_refs.load(std::memory_order_relaxed));
    if (shim_pid == shim_loaded_pid) {
        // The last reference: PC sampling's sessions are stopped, flushed
        // and destroyed while the runtime still accepts it (from OnUnload
        // ROCR 7.2 refuses, and its sessions' signals stayed allocated).
        if (g_runtime_refs.load(std::memory_order_relaxed) <= 1) {
            shim_pcs_shutdown();
            // The counter slots' signals, once no intercepted queue is left
            // to run a counted dispatch (HIP destroys its queues first).
            bool live = false;
            pthread_mutex_lock(&g_queues_lock);
            for (int i = 0; i < g_nqueues; i++)
                live |= g_queues[i] != nullptr;
            pthread_mutex_unlock(&g_queues_lock);
            if (!live)
                shim_pmc_shutdown();
        }
        release_before_shut_down();
    }
    hsa_status_t st = g_next_shut_down();
    if (st == HSA_STATUS_SUCCESS)
        g_runtime_refs.fetch_sub(1, std::memory_order_relaxed);
    return st;
}

// HIP may switch profiling off on its queues; an intercepted queue must keep
// producing timestamps.
hsa_status_t hook_set_profiler_enabled(hsa_queue_t *hq, int enable)
{
    if (!enable && find_queue(hq))
        enable = 1;
    return g_next_set_profiler(hq, enable);
}

} // namespace

// An app thread's wait on `app` (hsa_signal_wait_*; activity.cpp's hook):
// when `app` is the signal of a pending entry of an intercepted queue, wait
// on the entry's own signal instead, with the app's timeout and wait hint,
// and once it completes, complete the queue's entries up to it here, in
// order, as the completion thread would: recorded first, then passed on.
// The app's thread so sees its completion without waiting for the
// completion thread to wake up (on these VMs that took 150-250 us per
// synchronisation). Returns false when `app` is no pending entry's; *done
// tells whether the entry completed within the timeout.
bool shim_queue_assist(hsa_signal_t app, uint64_t timeout, hsa_wait_state_t hint, bool *done)
{
    Queue *q = nullptr;
    uint64_t seq = 0;
    hsa_signal_t ours{0};
    pthread_mutex_lock(&g_queues_lock);
    for (int k = 0; k < g_nqueues && !q; k++) {
        Queue *c = g_queues[k];
        if (!c)
            continue;
        pthread_mutex_lock(&c->proc);
        uint64_t t = c->tail.load(std::memory_order_acquire);
        for (uint64_t j = c->head.load(std::memory_order_relaxed); j != t; j++) {
            Pending *p = &c->ring[j & c->mask];
            if (p->interrupt && p->app.handle == app.handle) {
                p->waited.store(1, std::memory_order_release);
                q = c;
                seq = j;
                ours = p->ours;
                // Under proc: the entry cannot complete before these count.
                c->assists.fetch_add(1, std::memory_order_relaxed);
                g_assists_in_flight.fetch_add(1, std::memory_order_seq_cst);
                break;
            }
        }
        pthread_mutex_unlock(&c->proc);
    }
    pthread_mutex_unlock(&g_queues_lock);
    if (!q)
        return false;
    *done = shim_core.hsa_signal_wait_scacquire_fn(ours, HSA_SIGNAL_CONDITION_LT, 1, timeout,
                                                   hint) < 1;
    if (*done) {
        uint32_t self = rpg_tid();
        hsa_signal_t recycle[64];
        int nrecycle = 0;
        pthread_mutex_lock(&q->proc);
        for (uint64_t h = q->head.load(std::memory_order_relaxed); h <= seq && nrecycle < 64; h++) {
            Pending *p = &q->ring[h & q->mask];
            if (shim_core.hsa_signal_load_scacquire_fn(p->ours) >= 1)
                break; // out of order: the completion thread finishes the rest
            hsa_signal_t r = complete(q, p, self);
            if (r.handle)
                recycle[nrecycle++] = r;
            q->head.store(h + 1, std::memory_order_release);
        }
        q->last_assist_ns.store(rpg_now(), std::memory_order_relaxed);
        pthread_mutex_unlock(&q->proc);
        for (int i = 0; i < nrecycle; i++)
            recycle_signal(recycle[i]);
    }
    q->assists.fetch_sub(1, std::memory_order_release);
    if (g_assists_in_flight.fetch_sub(1, std::memory_order_seq_cst) == 1)
        flush_retired();
    return true;
}

void shim_install_queue_hooks()
{
    if (const char *d = getenv(RPG_ENV_GO_TEST_PUBLISH_DELAY_US))
        g_test_publish_delay_us = strtol(d, nullptr, 10) > 0 ? strtol(d, nullptr, 10) : 0;
    if (const char *h = getenv(RPG_ENV_GO_TEST_COMPLETION_HOLD))
        g_test_hold = h[0] == '1';
    g_crash_debug = getenv(RPG_ENV_GO_SHIM_DEBUG) != nullptr;
    if (const char *k = getenv(RPG_ENV_GO_TEST_DESTROY_KICK_US)) {
        long us = strtol(k, nullptr, 10);
        if (us > 0) {
            g_kick_ns = us * 1000;
            g_test_kick_note = true;
        }
    }
    uint64_t f = 0;
    if (shim_core.hsa_system_get_info_fn(HSA_SYSTEM_INFO_TIMESTAMP_FREQUENCY, &f) ==
            HSA_STATUS_SUCCESS &&
        f)
        g_tick_per_second = f;
    shim_hook(SHIM_CORE, CORE_hsa_queue_create, &g_next_queue_create, hook_queue_create);
    shim_hook(SHIM_CORE, CORE_hsa_queue_destroy, &g_next_queue_destroy, hook_queue_destroy);
    g_runtime_refs.store(1);
    shim_hook(SHIM_CORE, CORE_hsa_init, &g_next_init, hook_init);
    shim_hook(SHIM_CORE, CORE_hsa_shut_down, &g_next_shut_down, hook_shut_down);
    // Slot reservations tag their slots (see tag_slots).
#define RPG_HOOK_WRITE_INDEX(op, order)                                                  \
    shim_hook(SHIM_CORE, CORE_hsa_queue_##op##_write_index_##order, &g_next_##op##_##order, \
              hook_##op##_##order);
    RPG_HOOK_WRITE_INDEX(add, scacq_screl)
    RPG_HOOK_WRITE_INDEX(add, scacquire)
    RPG_HOOK_WRITE_INDEX(add, relaxed)
    RPG_HOOK_WRITE_INDEX(add, screlease)
    RPG_HOOK_WRITE_INDEX(cas, scacq_screl)
    RPG_HOOK_WRITE_INDEX(cas, scacquire)
    RPG_HOOK_WRITE_INDEX(cas, relaxed)
    RPG_HOOK_WRITE_INDEX(cas, screlease)
#undef RPG_HOOK_WRITE_INDEX
    // Dispatches completed before a fatal signal are recorded by its handler.
    if ((rpg_domains & (RPG_DOMAIN_KERNEL | RPG_DOMAIN_COUNTER)) || shim_pmc_on)
        shim_crash_install();
}

bool shim_queue_identify(const hsa_queue_t *hq, uint64_t *id, uint32_t *node)
{
    if (hq && t_destroying.queue == hq) {
        *id = t_destroying.id;
        *node = t_destroying.node;
        return true;
    }
    bool found = false;
    pthread_mutex_lock(&g_queues_lock);
    for (int i = 0; i < g_nqueues && !found; i++)
        if (g_queues[i] && g_queues[i]->queue == hq) {
            *id = g_queues[i]->id;
            *node = g_queues[i]->node;
            found = true;
        }
    for (int i = 0; i < g_nplain && !found; i++)
        if (g_plain[i].queue == hq) {
            *id = g_plain[i].id;
            *node = g_plain[i].node;
            found = true;
        }
    pthread_mutex_unlock(&g_queues_lock);
    return found;
}

// Called by activity.cpp, which owns the AMD-table hooks.
void shim_install_profiler_hook()
{
    shim_hook(SHIM_AMD, AMD_hsa_amd_profiling_set_profiler_enabled, &g_next_set_profiler,
              hook_set_profiler_enabled);
}

// From OnUnload (hsa_shut_down): the runtime is about to free its queues and
// signals, so stop the completion threads and hand back our signals first.
// Entries still pending then belong to packets that will never complete.
void shim_queues_shutdown()
{
    shim_crash_uninstall();
    // The kick queue is the shim's own: its signals must not outlive the
    // runtime (which reports them as leaked).
    pthread_mutex_lock(&g_kick_lock);
    if (g_kick_queue)
        g_next_queue_destroy(g_kick_queue);
    g_kick_queue = nullptr;
    pthread_mutex_unlock(&g_kick_lock);
    pthread_mutex_lock(&g_queues_lock);
    Queue *stopped[kMaxQueues];
    int nstopped = 0;
    for (int i = 0; i < g_nqueues; i++) {
        if (g_queues[i])
            stopped[nstopped++] = g_queues[i];
        __atomic_store_n(&g_queues[i], nullptr, __ATOMIC_SEQ_CST);
    }
    __atomic_store_n(&g_nqueues, 0, __ATOMIC_SEQ_CST);
    wait_bounded([] { return g_crash_readers.load(std::memory_order_seq_cst) == 0; });
    for (int i = 0; i < nstopped; i++) {
        Queue *q = stopped[i];
        q->stopping.store(true);
        wake(q);
        pthread_join(q->thread, nullptr);
        for (uint64_t k = 0; k <= q->mask; k++)
            if (q->ring[k].slot_signal.handle)
                shim_core.hsa_signal_destroy_fn(q->ring[k].slot_signal);
        // The queue itself is the app's (or the runtime's) to destroy.
    }
    g_queues_gen.fetch_add(1, std::memory_order_release);
    pthread_mutex_unlock(&g_queues_lock);
    SignalStack *stacks[] = {&g_pool, &g_retired};
    for (SignalStack *st : stacks) {
        pthread_mutex_lock(&st->lock);
        for (size_t i = 0; i < st->n; i++)
            shim_core.hsa_signal_destroy_fn(st->v[i]);
        st->n = 0;
        pthread_mutex_unlock(&st->lock);
    }
}

// ---- fatal signals ---------------------------------------------------------------

namespace {

// CLOCK_MONOTONIC ns (clock_gettime is async-signal-safe).
uint64_t mono_ns()
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

// One FIFO entry (index j) of q, from a fatal signal's handler: recorded here
// if the GPU completed it and nobody else records it.
void crash_entry(Queue *q, uint64_t j, uint32_t self, uint64_t deadline, ShimCrashStats *st)
{
    Pending *p = &q->ring[j & q->mask];
    const uint64_t seq = claim_seq(j);
    for (;;) {
        uint64_t c = p->claim.load(std::memory_order_acquire);
        if ((c & kClaimSeq) != seq || (uint32_t)c == kClaimDone)
            return; // recorded (or passed over) already; the slot may hold a newer entry
        if ((uint32_t)c != 0) {
            // Another thread is recording it (a completion thread, or an app
            // thread finishing its wait). Give it time to publish; this very
            // thread, interrupted mid-record, never will: skipped (counted),
            // as recording it here could duplicate it if the process lives on.
            if ((uint32_t)c != self && mono_ns() < deadline) {
                sched_yield();
                continue;
            }
            st->skipped++;
            return;
        }
        // Nobody has it: read what the entry and its signal hold, then claim.
        // A successful claim proves the entry was not completed and reused
        // meanwhile (completing an entry claims it first).
        if (!p->dispatch_id || !((rpg_domains & RPG_DOMAIN_KERNEL) || p->counted))
            return;
        const amd_signal_t *sig = (const amd_signal_t *)(uintptr_t)p->ours.handle;
        if (!sig)
            return;
        if (__atomic_load_n(&sig->value, __ATOMIC_ACQUIRE) >= 1) {
            st->pending++; // the GPU has not completed it
            return;
        }
        uint64_t start_ts = sig->start_ts, end_ts = sig->end_ts;
        rpg_kernel_dispatch_rec r;
        dispatch_rec(&r, q, p);
        if (q->tmap_ok && start_ts && end_ts >= start_ts) {
            TickMap m = q->tmap[q->tmap_idx.load(std::memory_order_acquire)];
            r.start_ns = tick_map_apply(&m, start_ts);
            r.end_ns = tick_map_apply(&m, end_ts);
        }
        if (!p->claim.compare_exchange_strong(c, seq | self, std::memory_order_acq_rel,
                                              std::memory_order_acquire))
            continue; // someone took it meanwhile: look again
        // The recorder is safe here: a record interrupted on this thread
        // keeps its cursor (this one uses the thread's second), and a spool
        // lock this thread holds is never waited for (the record is dropped,
        // counted in the spool header, which the CLI reports).
        if (rpg_record_kernel_dispatch(&r) == 0) {
            st->recorded++;
            __atomic_fetch_add(&shim_counters.dispatches_recorded, 1, __ATOMIC_RELAXED);
        } else {
            st->dropped++;
        }
        p->claim.store(seq | kClaimDone, std::memory_order_release);
        return;
    }
}

} // namespace

// From a fatal signal's handler (crash.cpp): records every dispatch of every
// intercepted queue's FIFO that the GPU completed and nobody recorded yet.
// Async-signal-safe: no lock, no allocation, no runtime call; a dispatch
// another thread is recording is waited for until wait_ns have passed.
void shim_queues_crash_flush(uint64_t wait_ns, ShimCrashStats *st)
{
    if (shim_pid != shim_loaded_pid || !rpg_record_kernel_dispatch)
        return; // a fork child: the FIFOs are its parent's
    uint32_t self = rpg_tid();
    uint64_t deadline = mono_ns() + wait_ns;
    g_crash_readers.fetch_add(1, std::memory_order_seq_cst);
    int n = __atomic_load_n(&g_nqueues, __ATOMIC_ACQUIRE);
    for (int i = 0; i < n && i < kMaxQueues; i++) {
        Queue *q = __atomic_load_n(&g_queues[i], __ATOMIC_SEQ_CST);
        if (!q)
            continue;
        uint64_t head = q->head.load(std::memory_order_acquire);
        uint64_t tail = q->tail.load(std::memory_order_acquire);
        if (tail - head > q->mask + 1)
            continue; // head moved past our look at it: take the FIFO as it is now
        for (uint64_t j = head; j != tail; j++)
            crash_entry(q, j, self, deadline, st);
    }
    g_crash_readers.fetch_sub(1, std::memory_order_seq_cst);
}

// At exit, give packets already submitted a moment to complete and be
// recorded: an app may launch and return from main without synchronising.
// Bounded, so that an exit never hangs on a stuck queue.
__attribute__((destructor)) static void drain_at_exit()
{
    if (shim_pid != shim_loaded_pid)
        return; // a fork child: the completion threads are not here
    for (int round = 0; round < 2000; round++) { // up to ~200 ms without progress
        bool pending = false;
        pthread_mutex_lock(&g_queues_lock);
        for (int i = 0; i < g_nqueues; i++) {
            Queue *q = g_queues[i];
            if (q && q->head.load() != q->tail.load()) {
                pending = true;
                wake(q);
            }
        }
        pthread_mutex_unlock(&g_queues_lock);
        if (!pending)
            return;
        usleep(100);
    }
}
