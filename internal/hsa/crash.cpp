// crash.cpp: the dispatches the GPU completed before a fatal signal.
//
// A dispatch is recorded when its queue's completion thread (or an app
// thread waiting for it) gets to it. A process that dies by a signal would
// lose those the GPU had already completed but nobody had recorded yet. So
// while dispatches are traced, the shim handles the signals a process dies
// of: SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGSYS always (chaining to
// a handler installed before ours), and SIGTERM, SIGINT, SIGHUP and SIGQUIT
// only while their disposition is the default one (the app decides what they
// do otherwise, and the process is not about to die).
//
// The handler records every completed, unrecorded dispatch of every
// intercepted queue (shim_queues_crash_flush, queue.cpp): with its real
// timestamps, read from the completion signal's memory and converted with the
// per-queue tick map made when the queue was created; exactly once, since each
// FIFO entry is claimed by whoever records it (the handler waits up to
// kWaitNs for an entry another thread is recording). Then the process dies as
// it would have: the previous disposition is restored and the signal raised
// again (a fault returns and faults again), or the app's earlier handler is
// called.
//
// SIGINT, SIGTERM, SIGHUP and SIGQUIT come from outside (Ctrl-C, a batch
// system's stop): the GPU goes on running the dispatches already submitted.
// rocprofv3's signal handler finalizes its tool, which keeps them; so the
// handler then also waits, up to kDrainNs, for the dispatches in flight to
// complete, and records them as they do (polling every kPollNs). A fault is
// the process's own doing, and its handler records only what is complete.
//
// Limits: SIGKILL cannot be handled (what was recorded stays, nothing more).
// A handler the app installs after ours replaces it: ours then does not run
// and the app's signal behaves as the app wants. A stack overflow's SIGSEGV
// runs the handler only if the thread has an alternate signal stack.
//
// With --disable-signal-handlers (ROCPROF_SIGNAL_HANDLERS=0, as rocprofv3)
// or ROCPROF_GO_NO_CRASH_HANDLER, none is installed: the app's signals are
// the app's (what the GPU completed and nobody recorded is then lost at a
// crash). The Go runtime of the shim still handles SIGSEGV, SIGBUS and
// SIGFPE, as every cgo library does, forwarding faults outside Go code to
// the handler installed before it.
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "shim_internal.hpp"

namespace {

// Signals that kill the process whatever the app does (unless the app
// handles them), and signals that kill it only with their default action.
const int kFaultSignals[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGSYS};
const int kAsyncSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

// How long the handler waits for dispatches other threads are recording.
const uint64_t kWaitNs = 100 * 1000 * 1000;

// How long an external stop waits for the dispatches in flight, and how
// often it looks at them.
const uint64_t kDrainNs = 5ull * 1000 * 1000 * 1000;
const uint64_t kPollNs = 1000 * 1000;

bool is_async(int sig)
{
    for (int s : kAsyncSignals)
        if (s == sig)
            return true;
    return false;
}

uint64_t mono_now()
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

struct sigaction g_prev[NSIG];
bool g_installed[NSIG];
sigset_t g_mask; // every signal above: none interrupts the handler
bool g_debug;

bool is_default(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_DFL;
}

bool is_ignored(const struct sigaction *a)
{
    return !(a->sa_flags & SA_SIGINFO) && a->sa_handler == SIG_IGN;
}

// "rocprof-go shim: signal 6: recorded 12 completed dispatches ..." with
// write(2) only (no stdio in a signal handler).
void note(int sig, const ShimCrashStats *st)
{
    char buf[256];
    size_t n = 0;
    auto put = [&](const char *s) {
        while (*s && n < sizeof buf - 1)
            buf[n++] = *s++;
    };
    auto num = [&](uint64_t v) {
        char d[24];
        int k = 0;
        do
            d[k++] = (char)('0' + v % 10);
        while ((v /= 10) && k < 24);
        while (k && n < sizeof buf - 1)
            buf[n++] = d[--k];
    };
    put("rocprof-go shim: signal ");
    num((uint64_t)sig);
    put(": recorded ");
    num(st->recorded);
    put(" completed dispatches (");
    num(st->pending);
    put(" not completed, ");
    num(st->skipped);
    put(" left to another thread, ");
    num(st->dropped);
    put(" dropped)\n");
    (void)!write(2, buf, n);
}

void handler(int sig, siginfo_t *info, void *uc)
{
    int saved_errno = errno;
    const struct sigaction *prev = &g_prev[sig];
    if (!is_ignored(prev)) {
        ShimCrashStats st{};
        shim_queues_crash_flush(kWaitNs, &st);
        if (is_async(sig) && st.pending) {
            // Each pass records what completed since the last; an entry is
            // recorded once (claimed), so passes add up.
            uint64_t deadline = mono_now() + kDrainNs;
            ShimCrashStats more{};
            do {
                struct timespec ts = {0, (long)kPollNs};
                nanosleep(&ts, nullptr);
                more = ShimCrashStats{};
                shim_queues_crash_flush(kWaitNs, &more);
                st.recorded += more.recorded;
                st.skipped += more.skipped;
                st.dropped += more.dropped;
                st.pending = more.pending;
            } while (more.pending && mono_now() < deadline);
        }
        if (g_debug)
            note(sig, &st);
    }
    if (is_default(prev)) {
        // Die as without us: the default action, on this signal.
        sigaction(sig, prev, nullptr);
        bool fault = info && info->si_code > 0 &&
                     (sig == SIGSEGV || sig == SIGBUS || sig == SIGFPE || sig == SIGILL);
        if (!fault)
            raise(sig); // pending (blocked in here) until the handler returns
        // A fault returns to the faulting instruction, which faults again.
    } else if (!is_ignored(prev)) {
        if (prev->sa_flags & SA_SIGINFO)
            prev->sa_sigaction(sig, info, uc);
        else
            prev->sa_handler(sig);
    }
    errno = saved_errno;
}

void install(int sig, bool only_default)
{
    struct sigaction cur;
    if (sigaction(sig, nullptr, &cur) != 0 || is_ignored(&cur) ||
        (only_default && !is_default(&cur)))
        return;
    g_prev[sig] = cur;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = handler;
    sa.sa_mask = g_mask;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
    if (sigaction(sig, &sa, nullptr) == 0)
        g_installed[sig] = true;
}

} // namespace

// signal_handlers_wanted is false under --disable-signal-handlers
// (ROCPROF_SIGNAL_HANDLERS=0, rocprofv3's variable and values): the app's
// signals are then the app's alone, as with rocprofv3.
bool signal_handlers_wanted()
{
    const char *v = getenv(RPG_ENV_SIGNAL_HANDLERS);
    if (!v)
        return true;
    static const char *const kOff[] = {"0", "false", "False", "FALSE", "off", "OFF", "no", "NO"};
    for (const char *off : kOff)
        if (strcmp(v, off) == 0)
            return false;
    return true;
}

// From OnLoad, when dispatches are intercepted (queue.cpp).
void shim_crash_install()
{
    if (getenv(RPG_ENV_GO_NO_CRASH_HANDLER) || !signal_handlers_wanted())
        return;
    g_debug = getenv(RPG_ENV_GO_SHIM_DEBUG) != nullptr;
    sigemptyset(&g_mask);
    for (int sig : kFaultSignals)
        sigaddset(&g_mask, sig);
    for (int sig : kAsyncSignals)
        sigaddset(&g_mask, sig);
    for (int sig : kFaultSignals)
        install(sig, false);
    for (int sig : kAsyncSignals)
        install(sig, true);
}

// From OnUnload: the queues are gone; handlers still ours go back to what
// they replaced.
void shim_crash_uninstall()
{
    for (int sig = 1; sig < NSIG; sig++) {
        if (!g_installed[sig])
            continue;
        struct sigaction cur;
        if (sigaction(sig, nullptr, &cur) == 0 && (cur.sa_flags & SA_SIGINFO) &&
            cur.sa_sigaction == handler)
            sigaction(sig, &g_prev[sig], nullptr);
        g_installed[sig] = false;
    }
}
