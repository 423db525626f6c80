/*
 * recorder.c: the per-process spool writer (layout in internal/tracing/spool.h).
 *
 * Cost model: the constructor only reads environment variables and registers
 * fork handlers. The spool file is created on the first record. A record is
 * then a thread-local bump of a cursor inside the thread's own chunk, a copy,
 * and one release store; a new chunk (every 64 KiB) takes one atomic add on
 * the header, and a new segment (every 4 MiB) takes the only lock.
 */
#define _GNU_SOURCE
#define RPG_RECORDER_IMPL
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "attach_internal.h"
#include "notes.h"
#include "rpg_internal.h"

#define CHUNKS_PER_SEGMENT (RPG_SEGMENT_SIZE / RPG_CHUNK_SIZE)
#define MAX_SEGMENTS 16384u /* 64 GiB of records per process image */
/* Segments further back than this are dropped from the page tables (their
 * data stays in the file) to keep the app's RSS bounded. */
#define RESIDENT_SEGMENTS 4u
/* Linux >= 5.14; older kernels answer EINVAL and the pages fault as usual. */
#ifdef MADV_POPULATE_WRITE
#define RPG_MADV_POPULATE_WRITE MADV_POPULATE_WRITE
#else
#define RPG_MADV_POPULATE_WRITE 23
#endif

extern char **environ;

uint32_t rpg_domains;
extern uint32_t rpg__domains __attribute__((alias("rpg_domains"), visibility("hidden")));

enum spool_state { SPOOL_NONE = 0, SPOOL_READY = 1, SPOOL_FAILED = -1, SPOOL_OFF = -2 };

static struct {
    int state; /* enum spool_state, atomic */
    int fd;
    rpg_spool_header *hdr;
    char *segments[MAX_SEGMENTS]; /* atomic pointers */
    uint32_t mapped_max;          /* highest mapped segment + 1 */
    uint64_t fork_generation;
    dev_t dev; /* identity of the spool file, to notice an app closing our fd */
    ino_t ino;
    char dir[PATH_MAX];
    char path[PATH_MAX];
} g_sp;

/* Records cut before the spool existed (the process's first record is
 * clamped before its reservation opens the spool): added to the header's
 * count when the spool is created. */
static uint64_t g_truncated_early;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

/* Set (once, never cleared in a process image) before this process first
 * caches a thread id or opens its spool: until then a fork child has nothing
 * to reset, and the fork handlers only read it. A shell forks for every
 * subshell; a handler that wrote would cost each fork copy-on-write faults
 * on the pages it touches, in the parent and in the child. */
static int g_active;
static int g_fork_locked; /* before_fork took g_lock */

static void mark_active(void)
{
    if (__builtin_expect(!__atomic_load_n(&g_active, __ATOMIC_RELAXED), 0))
        __atomic_store_n(&g_active, 1, __ATOMIC_SEQ_CST);
}

/* Partly used chunks of exited threads, handed to the next new chunk request
 * so that an app creating many short-lived threads does not use 64 KiB of
 * spool per thread. */
#define FREE_CHUNKS 256
static pthread_mutex_t g_free_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    char *cur;
    char *end;
} g_free[FREE_CHUNKS];
static unsigned g_nfree;
static pthread_key_t g_exit_key;
static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;
uint64_t rpg__correlation = 1;   /* atomic; ids start at 1 */
uint64_t rpg__correlation_floor; /* atomic */
static int32_t g_pid;

typedef rpg_cursor cursor;

/* The pre-faulting helper thread (see "pre-faulting" below). */
enum helper_state { HELPER_NONE = 0, HELPER_WANTED = 1, HELPER_STARTING = 2, HELPER_RUNNING = 3,
                    HELPER_FAILED = -1 };
int rpg__helper; /* enum helper_state, atomic; rpg_internal.h tests it inline */
static uint32_t g_helper_kick;      /* futex word: bumped to wake the helper */
/* Attach mode: the helper is joinable, so that the detach knows it is gone
 * before the library unloads (rpg__recorder_finish). */
static int g_attach_mode;
static int g_helper_stop;
static int g_helper_joinable;
static pthread_t g_helper_thread;
static uint32_t g_helper_sleeping;  /* the helper waits on g_helper_kick */
static uint64_t g_prefaulted;       /* chunks [0, g_prefaulted) have their pages */
/* How far ahead of the chunks handed out the helper keeps pages ready, and
 * how much it faults per call. Two segments: at ~30 ns a record a writer
 * fills a 4 MiB segment in ~4 ms, and faulting one in takes 3-6 ms here. */
#define PREFAULT_AHEAD_CHUNKS (2u * CHUNKS_PER_SEGMENT)
#define PREFAULT_STEP_CHUNKS 16u

/* The writing thread's state (rpg_internal.h). */
__thread __attribute__((tls_model("initial-exec"))) rpg_thread_state rpg__t;
#define t_rec rpg__t

/* Takes g_lock unless this thread already holds it (we are in a signal
 * handler that interrupted the holder): then the caller gives up instead of
 * deadlocking. */
static int lock_spool(void)
{
    if (t_rec.holds_lock)
        return 0;
    pthread_mutex_lock(&g_lock);
    t_rec.holds_lock = 1;
    return 1;
}

static void unlock_spool(void)
{
    t_rec.holds_lock = 0;
    pthread_mutex_unlock(&g_lock);
}

static void count(uint64_t *field)
{
    if (__atomic_load_n(&g_sp.state, __ATOMIC_ACQUIRE) == SPOOL_READY)
        __atomic_fetch_add(field, 1, __ATOMIC_RELAXED);
}

/* ---- ids ---------------------------------------------------------------- */

uint32_t rpg_tid(void)
{
    if (__builtin_expect(t_rec.tid == 0, 0)) {
        mark_active();
        t_rec.tid = (uint32_t)syscall(SYS_gettid);
    }
    return t_rec.tid;
}

int32_t rpg_pid(void) { return (int32_t)getpid(); }

uint64_t rpg_correlation_next(void) { return rpg__correlation_next(); }

/* A thread's first block holds 16 ids, each next one twice as many up to
 * 4096: a thread making a handful of calls leaves a small gap in the ids,
 * one making millions takes the process-wide atomic add once per 4096. */
#define CORR_BLOCK_MIN 16u
#define CORR_BLOCK_MAX 4096u

/* rpg__correlation_next's slow path: a new block for this thread, whose
 * first id it returns (and, at a traced call's entry, the moment to start the
 * pre-faulting helper if it is wanted). A signal handler may run anywhere in here and take a
 * block of its own: corr_end is 0 while corr_next and corr_end do not
 * describe one block, so a handler never takes an id from a half-made block;
 * if the handler's block is overwritten, its remaining ids go unused, and if
 * it lands between our two stores, its corr_next lies above our corr_end
 * (blocks are handed out in increasing order), so the next call refills. */
uint64_t rpg__correlation_refill(int api_entry)
{
    if (api_entry)
        rpg__helper_poll();
    rpg_thread_state *t = &t_rec;
    uint32_t n = t->corr_size < CORR_BLOCK_MIN ? CORR_BLOCK_MIN : t->corr_size;
    uint64_t base = __atomic_fetch_add(&rpg__correlation, n, __ATOMIC_RELAXED);
    t->corr_end = 0;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->corr_next = base + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t->corr_end = base + n;
    t->corr_size = n < CORR_BLOCK_MAX ? 2 * n : CORR_BLOCK_MAX;
    return base;
}

/* Makes every block handed out so far stale: each thread's next id comes
 * from a new block, above every id drawn before. A block taken concurrently
 * is either below the floor (and refilled) or above it. */
void rpg__correlation_barrier(void)
{
    uint64_t g = __atomic_load_n(&rpg__correlation, __ATOMIC_SEQ_CST);
    uint64_t f = __atomic_load_n(&rpg__correlation_floor, __ATOMIC_RELAXED);
    while (f < g && !__atomic_compare_exchange_n(&rpg__correlation_floor, &f, g, 1,
                                                 __ATOMIC_SEQ_CST, __ATOMIC_RELAXED))
        ;
}

uint64_t rpg_correlation_current(void) { return rpg__correlation_current(); }

uint64_t rpg_correlation_set(uint64_t id) { return rpg__correlation_set(id); }

void rpg_api_begin(rpg_api_span *s) { rpg__api_begin_fast(s); }

int rpg_api_end(const rpg_api_span *s, uint16_t kind, uint32_t domain, uint32_t function)
{
    return rpg__api_end_fast(s, kind, domain, function);
}

const rpg_inline_abi *rpg_inline_abi_get(void)
{
    static rpg_inline_abi abi;
    if (!abi.size) {
        char *tp;
        __asm__("mov %%fs:0, %0" : "=r"(tp));
        abi.version = RPG_INLINE_ABI_VERSION;
        abi.thread_state_size = (uint32_t)sizeof(rpg_thread_state);
        abi.tls_offset = (intptr_t)((char *)&rpg__t - tp);
        abi.clock = &rpg__clock;
        abi.correlation_floor = &rpg__correlation_floor;
        abi.correlation_refill = rpg__correlation_refill;
        abi.helper = &rpg__helper;
        abi.helper_start = rpg__helper_start;
        abi.now_slow = rpg__now_slow;
        abi.record_api_slow = rpg__record_api_slow;
        abi.record_api_stamped_slow = rpg__record_api_stamped_slow;
        __atomic_store_n(&abi.size, (uint32_t)sizeof abi, __ATOMIC_RELEASE);
    }
    return &abi;
}

const char *rpg_spool_path(void)
{
    return __atomic_load_n(&g_sp.state, __ATOMIC_ACQUIRE) == SPOOL_READY ? g_sp.path : NULL;
}

/* ---- creation ----------------------------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static ssize_t read_file(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t n = 0;
    while (n < cap) {
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    return (ssize_t)n;
}

static int32_t parent_children(pid_t ppid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%d/task/%d/children", (int)ppid, (int)ppid);
    ssize_t n = read_file(path, buf, sizeof buf);
    if (n < 0)
        return -1;
    int32_t count = 0;
    for (ssize_t i = 0; i < n; i++)
        if (buf[i] == ' ')
            count++;
    return count;
}

typedef struct blob {
    char *p;
    char *end;
} blob;

/* Appends one section, truncated to what is left (keeping room for the end
 * tag). Returns the bytes of payload written. */
static size_t blob_add(blob *b, uint32_t tag, const char *data, size_t len)
{
    size_t room = (size_t)(b->end - b->p);
    if (room < 16 + 8)
        return 0;
    room -= 16;
    if (len > room - 8)
        len = room - 8;
    uint32_t h[2] = {tag, (uint32_t)len};
    memcpy(b->p, h, 8);
    memcpy(b->p + 8, data, len);
    b->p += 8 + ((len + 7) & ~(size_t)7);
    return len;
}

static void blob_add_file(blob *b, uint32_t tag, const char *path)
{
    /* Read straight into place: section header first, then the bytes. */
    size_t room = (size_t)(b->end - b->p);
    if (room < 32)
        return;
    ssize_t n = read_file(path, b->p + 8, room - 24);
    if (n < 0)
        n = 0;
    uint32_t h[2] = {tag, (uint32_t)n};
    memcpy(b->p, h, 8);
    b->p += 8 + (((size_t)n + 7) & ~(size_t)7);
}

static void blob_add_environ(blob *b)
{
    char *start = b->p + 8;
    char *limit = b->end - 16;
    char *q = start;
    for (char **e = environ; e && *e; e++) {
        size_t l = strlen(*e) + 1;
        if (q + l > limit)
            break; /* whole entries only */
        memcpy(q, *e, l);
        q += l;
    }
    uint32_t h[2] = {RPG_BLOB_ENVIRON, (uint32_t)(q - start)};
    memcpy(b->p, h, 8);
    b->p += 8 + (((size_t)(q - start) + 7) & ~(size_t)7);
}

static void fill_header(rpg_spool_header *h)
{
    h->version = RPG_SPOOL_VERSION;
    h->header_fixed = RPG_HEADER_FIXED;
    h->chunk_size = RPG_CHUNK_SIZE;
    h->segment_size = RPG_SEGMENT_SIZE;
    h->pid = g_pid;
    h->ppid = getppid();
    h->pgid = getpgrp();
    h->sid = getsid(0);
    h->psize = parent_children(h->ppid);
    h->start_boottime_ns = clock_ns(CLOCK_BOOTTIME);
    h->start_realtime_ns = clock_ns(CLOCK_REALTIME);
    h->fork_generation = g_sp.fork_generation;
    h->chunks_reserved = 1;
    h->chunks_headed = 1;
    h->flags = RPG_HEADER_COUNTS_ABANDONED | RPG_HEADER_COUNTS_HEADED | RPG_HEADER_SEALS;

    blob b = {(char *)h + RPG_HEADER_FIXED, (char *)h + RPG_CHUNK_SIZE};
    char tmp[PATH_MAX];
    if (gethostname(tmp, sizeof tmp) == 0) {
        tmp[sizeof tmp - 1] = 0;
        blob_add(&b, RPG_BLOB_HOSTNAME, tmp, strlen(tmp));
    }
    if (getcwd(tmp, sizeof tmp))
        blob_add(&b, RPG_BLOB_CWD, tmp, strlen(tmp));
    ssize_t n = readlink("/proc/self/exe", tmp, sizeof tmp);
    if (n > 0)
        blob_add(&b, RPG_BLOB_EXE, tmp, (size_t)n);
    /* The time namespace's clock offsets: a process in another one than
     * rocprof-go's stamps its records on a shifted CLOCK_BOOTTIME, which
     * the CLI names (internal/pipeline/timens.go). Absent without
     * CONFIG_TIME_NS (Linux < 5.6). */
    ssize_t tn = read_file("/proc/self/timens_offsets", tmp, sizeof tmp);
    if (tn > 0)
        blob_add(&b, RPG_BLOB_TIMENS, tmp, (size_t)tn);
    blob_add_file(&b, RPG_BLOB_ARGV, "/proc/self/cmdline");
    blob_add_environ(&b);
    /* The end tag is the zero bytes already there. */
    h->blob_size = (uint32_t)(b.p - ((char *)h + RPG_HEADER_FIXED));
}

/* Moves a descriptor out of the low numbers apps tend to reuse and close. */
static int high_fd(int fd)
{
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, 512);
    if (hi < 0)
        return fd;
    close(fd);
    return hi;
}

/* Apps that daemonize close every descriptor, and may then open their own
 * file under our number: check the descriptor is still the spool before
 * growing it, and reopen the spool by path if not. */
static int spool_fd_locked(void)
{
    struct stat st;
    if (g_sp.fd >= 0 && fstat(g_sp.fd, &st) == 0 && st.st_dev == g_sp.dev && st.st_ino == g_sp.ino)
        return g_sp.fd;
    int fd = open(g_sp.path, O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || st.st_dev != g_sp.dev || st.st_ino != g_sp.ino) {
        close(fd);
        return -1;
    }
    g_sp.fd = high_fd(fd);
    return g_sp.fd;
}

/* Reserves a segment's space on a file system without fallocate (FUSE such
 * as bindfs, NFSv3). ftruncate there reserves nothing: records stored into
 * the mapping would be lost when their pages are written back to a full
 * store (or fault with SIGBUS), and nobody would know. Writing the
 * segment's zeros takes the space now, so a full store fails this call
 * and the records are counted as dropped; fdatasync makes a store that
 * defers its writes (NFS) report it now too. Once per 4 MiB segment, never
 * per record. On failure what was written is given back (none of it is
 * mapped: every mapped segment lies below the file's old end). */
static int reserve_by_writing(int fd, off_t off, size_t len)
{
    static const char zeros[64 * 1024];
    struct stat st;
    off_t old = fstat(fd, &st) == 0 ? st.st_size : -1;
    size_t done = 0;
    int rc = 0;
    while (done < len) {
        size_t n = len - done < sizeof zeros ? len - done : sizeof zeros;
        ssize_t w = pwrite(fd, zeros, n, off + (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            rc = -1;
            break;
        }
        done += (size_t)w;
    }
    while (rc == 0 && fdatasync(fd) != 0) {
        if (errno == EINTR)
            continue;
        if (errno != EINVAL && errno != ENOSYS && errno != EOPNOTSUPP)
            rc = -1;
        break;
    }
    if (rc != 0 && old >= 0 && old <= off) {
        int e = errno;
        if (ftruncate(fd, old) != 0) {
            /* the space stays taken; the failure is reported all the same */
        }
        errno = e;
    }
    return rc;
}

static char *map_segment_locked(uint32_t seg, int populate)
{
    if (seg >= MAX_SEGMENTS)
        return NULL;
    char *base = g_sp.segments[seg];
    if (base)
        return base;
    if (seg > 0 && spool_fd_locked() < 0)
        return NULL;
    off_t off = (off_t)seg * RPG_SEGMENT_SIZE;
    /* fallocate, not ftruncate: a full tmpfs must fail here, not SIGBUS later. */
    int rc;
    do
        rc = fallocate(g_sp.fd, 0, off, RPG_SEGMENT_SIZE);
    while (rc != 0 && errno == EINTR);
    if (rc != 0 && (errno == EOPNOTSUPP || errno == ENOSYS))
        rc = reserve_by_writing(g_sp.fd, off, RPG_SEGMENT_SIZE);
    if (rc != 0) {
        /* The spool says why it could not grow (segment 0 has no header
         * yet: open_spool_locked's note says it). */
        if (g_sp.hdr)
            __atomic_store_n(&g_sp.hdr->store_errno, errno, __ATOMIC_RELAXED);
        return NULL;
    }
    /* Pre-faulting costs one call instead of a thousand faults (2-4 us each on
     * a VM); the first segment is left to fault lazily so that a process
     * recording a handful of events does not pay for 4 MiB, and so are the
     * segments the helper thread faults in outside the lock. */
    base = mmap(NULL, RPG_SEGMENT_SIZE, PROT_READ | PROT_WRITE,
                MAP_SHARED | (populate ? MAP_POPULATE : 0), g_sp.fd, off);
    if (base == MAP_FAILED)
        return NULL;
    __atomic_store_n(&g_sp.segments[seg], base, __ATOMIC_RELEASE);
    if (seg + 1 > g_sp.mapped_max)
        g_sp.mapped_max = seg + 1;
    if (seg >= RESIDENT_SEGMENTS) {
        /* MADV_DONTNEED on a shared mapping only drops page-table entries;
         * the data stays in the file, and a late writer faults it back in. */
        char *old = g_sp.segments[seg - RESIDENT_SEGMENTS];
        if (old && seg - RESIDENT_SEGMENTS != 0)
            madvise(old, RPG_SEGMENT_SIZE, MADV_DONTNEED);
    }
    return base;
}

/* Why the spool could not be opened (open_spool_locked), for the notes. */
static int g_fail_errno;
static const char *g_fail_stage;

static int spool_failed(const char *stage)
{
    g_fail_errno = errno;
    g_fail_stage = stage;
    return SPOOL_FAILED;
}

static int open_spool_locked(void)
{
    /* A fork child that forked before its parent was active (after_fork_child
     * had nothing to reset) still has the parent's pid here: one fork at
     * least separates it from the image that took g_pid. */
    int32_t pid = (int32_t)getpid();
    if (pid != g_pid) {
        g_pid = pid;
        g_sp.fork_generation++;
    }
    int fd = -1;
    uint64_t stamp = clock_ns(CLOCK_BOOTTIME);
    for (int n = 0; n < 1000 && fd < 0; n++) {
        int len = snprintf(g_sp.path, sizeof g_sp.path, "%s/rpg-%d-%llu-%d.spool", g_sp.dir,
                           (int)g_pid, (unsigned long long)stamp, n);
        if (len <= 0 || (size_t)len >= sizeof g_sp.path) {
            errno = ENAMETOOLONG;
            return spool_failed("create");
        }
        fd = open(g_sp.path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST)
            return spool_failed("create");
    }
    if (fd < 0)
        return spool_failed("create");
    struct stat st;
    if (fstat(fd, &st) != 0) {
        int e = errno;
        close(fd);
        errno = e;
        return spool_failed("create");
    }
    g_sp.dev = st.st_dev;
    g_sp.ino = st.st_ino;
    g_sp.fd = high_fd(fd);
    char *base = map_segment_locked(0, 0);
    if (!base) {
        int e = errno;
        close(g_sp.fd);
        g_sp.fd = -1;
        errno = e;
        return spool_failed("map");
    }
    rpg_spool_header *h = (rpg_spool_header *)base;
    fill_header(h);
    h->truncated += __atomic_exchange_n(&g_truncated_early, 0, __ATOMIC_RELAXED);
    g_sp.hdr = h;
    __atomic_store_n(&h->magic, RPG_SPOOL_MAGIC, __ATOMIC_RELEASE);
    return SPOOL_READY;
}

static int spool_ready(void)
{
    int st = __atomic_load_n(&g_sp.state, __ATOMIC_ACQUIRE);
    if (__builtin_expect(st != SPOOL_NONE, 1))
        return st == SPOOL_READY;
    mark_active();
    if (!lock_spool())
        return 0;
    st = g_sp.state;
    int failed_now = 0;
    if (st == SPOOL_NONE) {
        st = g_sp.dir[0] ? open_spool_locked() : SPOOL_OFF;
        failed_now = st == SPOOL_FAILED;
        __atomic_store_n(&g_sp.state, st, __ATOMIC_RELEASE);
    }
    unlock_spool();
    /* Once per process image: every record it makes is lost, and the CLI
     * would otherwise see nothing at all of this process. */
    if (failed_now)
        rpg__note_spool_failed(g_fail_errno, g_fail_stage, g_sp.dir);
    return st == SPOOL_READY;
}

/* ---- chunks and records ------------------------------------------------- */

/* Seals a chunk its writer leaves for good (RPG_CHUNK_SEALED): every record
 * in it is published (a cursor moves on only between records), and no
 * cursor points into it any more, so the CLI may copy it to the output file
 * system and punch it out of the spool (internal/tracing/drain.go). The
 * release store orders the records' publication before the seal. A chunk
 * handed on to another thread (g_free) is not sealed: its next owner seals
 * it when it leaves it. */
static void seal_chunk(char *end)
{
    rpg_chunk_header *ch = (rpg_chunk_header *)(end - RPG_CHUNK_SIZE);
    __atomic_store_n(&ch->magic, RPG_CHUNK_SEALED, __ATOMIC_RELEASE);
}

/* Thread exit: give the thread's chunks back. Records end where the cursor
 * is, so whoever continues a chunk appends right after the last record. */
static void thread_exit(void *arg)
{
    (void)arg;
    int ready = __atomic_load_n(&g_sp.state, __ATOMIC_ACQUIRE) == SPOOL_READY;
    pthread_mutex_lock(&g_free_lock);
    for (int i = 0; i < 2; i++) {
        cursor *c = &t_rec.c[i];
        if (c->cur && (size_t)(c->end - c->cur) >= 1024 && g_nfree < FREE_CHUNKS) {
            g_free[g_nfree].cur = c->cur;
            g_free[g_nfree].end = c->end;
            g_nfree++;
        } else if (c->cur && ready) {
            seal_chunk(c->end);
        }
        c->cur = c->end = NULL;
        c->clock_gen = 0;
    }
    pthread_mutex_unlock(&g_free_lock);
}

static void make_exit_key(void) { pthread_key_create(&g_exit_key, thread_exit); }

/* ---- pre-faulting ------------------------------------------------------- */

/* A fresh spool page costs 2-4 us to allocate, zero and map on this kind of
 * VM, ~20-30 ns per 32-byte record: more than the rest of a traced call. A
 * process that records a lot gets a helper thread that keeps the pages of the
 * next PREFAULT_AHEAD_CHUNKS chunks faulted in (fallocate, mmap, then
 * MADV_POPULATE_WRITE outside the lock), so the app's threads find them
 * ready. It moves that CPU time off the app's threads, it does not remove it.
 *
 * The helper is wanted once a thread takes its second chunk (new_chunk), and
 * started by the next traced API call that is not inside a record
 * (rpg__helper_start, via rpg__helper_poll): never from the record path
 * itself, which may run in a signal handler that interrupted malloc. It
 * blocks every signal, never takes a lock a signal handler could hold except
 * g_lock (which handlers only try), and sleeps on a futex between requests.
 * A fork child has no helper; it asks for its own the same way. */

static long futex(uint32_t *w, int op, uint32_t v)
{
    return syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

static void helper_kick(void)
{
    __atomic_add_fetch(&g_helper_kick, 1, __ATOMIC_RELEASE);
    if (__atomic_load_n(&g_helper_sleeping, __ATOMIC_ACQUIRE))
        futex(&g_helper_kick, FUTEX_WAKE_PRIVATE, 1);
}

/* Faults chunks [from, to) of one segment in; 0 when it could not. */
static int prefault_chunks(uint64_t from, uint64_t to)
{
    uint64_t seg = from / CHUNKS_PER_SEGMENT;
    char *base = __atomic_load_n(&g_sp.segments[seg], __ATOMIC_ACQUIRE);
    if (!base) {
        pthread_mutex_lock(&g_lock);
        base = map_segment_locked((uint32_t)seg, 0);
        pthread_mutex_unlock(&g_lock);
        if (!base)
            return 0;
    }
    char *p = base + (from % CHUNKS_PER_SEGMENT) * RPG_CHUNK_SIZE;
    size_t len = (size_t)(to - from) * RPG_CHUNK_SIZE;
    if (madvise(p, len, RPG_MADV_POPULATE_WRITE) != 0) {
        /* Kernels before 5.14: touch each page with an atomic add of zero,
         * which is harmless to a writer storing there at the same time. */
        for (size_t off = 0; off < len; off += 4096)
            __atomic_fetch_add((uint64_t *)(p + off), 0, __ATOMIC_RELAXED);
    }
    return 1;
}

static void prefault_ahead(void)
{
    while (__atomic_load_n(&g_sp.state, __ATOMIC_ACQUIRE) == SPOOL_READY) {
        uint64_t reserved = __atomic_load_n(&g_sp.hdr->chunks_reserved, __ATOMIC_RELAXED);
        uint64_t done = __atomic_load_n(&g_prefaulted, __ATOMIC_RELAXED);
        if (done < reserved)
            done = reserved; /* those are in use: their writers faulted them */
        uint64_t target = reserved + PREFAULT_AHEAD_CHUNKS;
        if (target > (uint64_t)MAX_SEGMENTS * CHUNKS_PER_SEGMENT)
            target = (uint64_t)MAX_SEGMENTS * CHUNKS_PER_SEGMENT;
        /* Nothing prepared past the CLI's limit: it is memory it bounds. */
        uint64_t limit = __atomic_load_n(&g_sp.hdr->chunk_limit, __ATOMIC_RELAXED);
        if (limit && target > limit)
            target = limit;
        if (done >= target)
            return;
        uint64_t end = (done / PREFAULT_STEP_CHUNKS + 1) * PREFAULT_STEP_CHUNKS;
        if (end > target)
            end = target;
        if (__atomic_load_n(&g_sp.hdr->stop, __ATOMIC_RELAXED))
            return; /* the CLI stopped the recording: nothing more to prepare */
        if (!prefault_chunks(done, end))
            return; /* no space: the writers will count their drops */
        __atomic_store_n(&g_prefaulted, end, __ATOMIC_RELEASE);
    }
}

static void *helper_main(void *arg)
{
    (void)arg;
    for (;;) {
        uint32_t kick = __atomic_load_n(&g_helper_kick, __ATOMIC_ACQUIRE);
        if (__atomic_load_n(&g_helper_stop, __ATOMIC_ACQUIRE))
            return NULL;
        prefault_ahead();
        __atomic_store_n(&g_helper_sleeping, 1, __ATOMIC_SEQ_CST);
        if (__atomic_load_n(&g_helper_kick, __ATOMIC_SEQ_CST) == kick)
            futex(&g_helper_kick, FUTEX_WAIT_PRIVATE, kick);
        __atomic_store_n(&g_helper_sleeping, 0, __ATOMIC_RELAXED);
    }
    return NULL;
}

void rpg__helper_start(void)
{
    /* Not from inside a record (a signal handler that interrupted one). */
    if (t_rec.depth != 0 || t_rec.holds_lock)
        return;
    int wanted = HELPER_WANTED;
    if (!__atomic_compare_exchange_n(&rpg__helper, &wanted, HELPER_STARTING, 0, __ATOMIC_ACQ_REL,
                                     __ATOMIC_RELAXED))
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_t a;
    pthread_attr_init(&a);
    int joinable = __atomic_load_n(&g_attach_mode, __ATOMIC_RELAXED);
    pthread_attr_setdetachstate(&a, joinable ? PTHREAD_CREATE_JOINABLE : PTHREAD_CREATE_DETACHED);
    pthread_attr_setstacksize(&a, 256 * 1024); /* static TLS comes out of it too */
    pthread_t th;
    int rc = pthread_create(&th, &a, helper_main, NULL);
    pthread_attr_destroy(&a);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc == 0) {
        pthread_setname_np(th, "rpg-prefault");
        if (joinable) {
            g_helper_thread = th;
            __atomic_store_n(&g_helper_joinable, 1, __ATOMIC_RELEASE);
        }
    }
    __atomic_store_n(&rpg__helper, rc == 0 ? HELPER_RUNNING : HELPER_FAILED, __ATOMIC_RELEASE);
}

/* Takes over a chunk an exited thread left, and names this thread its
 * writer from here on (records without a tid of their own belong to it). */
static int reuse_chunk(cursor *c, uint32_t size)
{
    if (__atomic_load_n(&g_nfree, __ATOMIC_RELAXED) == 0 || t_rec.depth > 1)
        return 0;
    int ok = 0;
    size += (uint32_t)sizeof(rpg_thread_rec);
    pthread_mutex_lock(&g_free_lock);
    if (g_nfree > 0 && (size_t)(g_free[g_nfree - 1].end - g_free[g_nfree - 1].cur) >= size) {
        g_nfree--;
        c->cur = g_free[g_nfree].cur;
        c->end = g_free[g_nfree].end;
        c->clock_gen = 0; /* a clock record of the last owner's is not this cursor's to trust */
        ok = 1;
    }
    pthread_mutex_unlock(&g_free_lock);
    if (ok) {
        rpg_thread_rec *r = (rpg_thread_rec *)c->cur;
        __atomic_store_n(&r->h.size, (uint32_t)sizeof *r, __ATOMIC_RELAXED);
        r->tid = rpg_tid();
        r->reserved = 0;
        uint64_t w = (uint64_t)sizeof *r | (uint64_t)RPG_KIND_THREAD << 32 | (uint64_t)1 << 48 |
                     (uint64_t)RPG_COMMIT << 56;
        __atomic_store_n((uint64_t *)r, w, __ATOMIC_RELEASE);
        c->cur += sizeof *r;
    }
    return ok;
}

/* Once a segment could not be allocated (the spool's file system is full),
 * the next SPOOL_FULL_RETRY chunk requests fail at once, counted as dropped
 * by their callers, instead of each paying a lock and a failing fallocate
 * (~1.8 us a record measured): the app is not slowed by a full /dev/shm,
 * and a file system that gets room again is noticed. */
#define SPOOL_FULL_RETRY 4096u
static uint32_t g_full_skip;

static int new_chunk(cursor *c, uint32_t size)
{
    if (!spool_ready())
        return 0;
    if (__builtin_expect(__atomic_load_n(&g_full_skip, __ATOMIC_RELAXED) != 0, 0)) {
        __atomic_sub_fetch(&g_full_skip, 1, __ATOMIC_RELAXED);
        return 0;
    }
    /* The CLI stopped the recording (its /dev/shm share is used up until it
     * has drained the spool, or the output file system is full): no new
     * chunk, the caller counts the record in dropped. One load per chunk. */
    uint32_t stop = __atomic_load_n(&g_sp.hdr->stop, __ATOMIC_ACQUIRE);
    uint64_t limit = __atomic_load_n(&g_sp.hdr->chunk_limit, __ATOMIC_ACQUIRE);
    if (__builtin_expect(limit != 0, 0) &&
        __atomic_load_n(&g_sp.hdr->chunks_reserved, __ATOMIC_RELAXED) >= limit)
        stop |= RPG_STOP_SHM_SHARE;
    if (__builtin_expect(stop != 0, 0)) {
        if ((__atomic_load_n(&g_sp.hdr->stop_seen, __ATOMIC_RELAXED) & stop) != stop)
            __atomic_fetch_or(&g_sp.hdr->stop_seen, stop, __ATOMIC_RELAXED);
        return 0;
    }
    int had_chunk = c->cur != NULL;
    char *old_end = c->end;
    if (c->cur == NULL) {
        /* First chunk of this thread: have its exit hand the chunk back. */
        pthread_once(&g_exit_once, make_exit_key);
        pthread_setspecific(g_exit_key, &t_rec);
        if (reuse_chunk(c, size))
            return 1;
    }
    uint64_t idx = __atomic_fetch_add(&g_sp.hdr->chunks_reserved, 1, __ATOMIC_RELAXED);
    uint64_t seg = idx / CHUNKS_PER_SEGMENT;
    if (seg >= MAX_SEGMENTS) {
        count(&g_sp.hdr->chunks_abandoned);
        return 0;
    }
    int helper = __atomic_load_n(&rpg__helper, __ATOMIC_ACQUIRE);
    int ready = helper == HELPER_RUNNING && idx < __atomic_load_n(&g_prefaulted, __ATOMIC_ACQUIRE);
    char *base = __atomic_load_n(&g_sp.segments[seg], __ATOMIC_ACQUIRE);
    if (!base) {
        if (!lock_spool()) {
            count(&g_sp.hdr->chunks_abandoned);
            return 0;
        }
        /* With the helper running, it faults the pages in behind us. */
        base = map_segment_locked((uint32_t)seg, helper != HELPER_RUNNING && seg > 0);
        unlock_spool();
        if (!base) {
            count(&g_sp.hdr->chunks_abandoned);
            __atomic_store_n(&g_full_skip, SPOOL_FULL_RETRY, __ATOMIC_RELAXED);
            return 0;
        }
    }
    if (helper == HELPER_RUNNING) {
        if (idx + PREFAULT_AHEAD_CHUNKS / 2 >= __atomic_load_n(&g_prefaulted, __ATOMIC_ACQUIRE))
            helper_kick();
    } else if (idx % CHUNKS_PER_SEGMENT == CHUNKS_PER_SEGMENT / 2 && seg + 1 < MAX_SEGMENTS &&
               (limit == 0 || (seg + 1) * CHUNKS_PER_SEGMENT < limit) &&
               !__atomic_load_n(&g_sp.segments[seg + 1], __ATOMIC_ACQUIRE) && !t_rec.holds_lock &&
               pthread_mutex_trylock(&g_lock) == 0) {
        /* No helper: halfway through a segment, the thread that takes that
         * chunk maps the next one, so the others rarely wait for a segment
         * to be populated. */
        t_rec.holds_lock = 1;
        map_segment_locked((uint32_t)seg + 1, 1);
        unlock_spool();
    }
    char *chunk = base + (idx % CHUNKS_PER_SEGMENT) * RPG_CHUNK_SIZE;
    /* Segment 0 is not pre-faulted (a process recording a handful of events
     * should not pay for 4 MiB); a thread taking its second chunk there is
     * recording a lot: fault the chunk's 16 pages in one call rather than one
     * fault each (unless the helper did), and ask for the helper, which the
     * next traced API call outside any record starts. */
    if (seg == 0 && had_chunk && !ready)
        madvise(chunk, RPG_CHUNK_SIZE, RPG_MADV_POPULATE_WRITE);
    if (had_chunk && helper == HELPER_NONE) {
        int none = HELPER_NONE;
        __atomic_compare_exchange_n(&rpg__helper, &none, HELPER_WANTED, 0, __ATOMIC_RELEASE,
                                    __ATOMIC_RELAXED);
    }
    rpg_chunk_header *ch = (rpg_chunk_header *)chunk;
    ch->tid = rpg_tid();
    ch->index = idx;
    __atomic_store_n(&ch->magic, RPG_CHUNK_MAGIC, __ATOMIC_RELEASE);
    /* Only now does the chunk count as one that must read back with its
     * header: a writer killed between the reservation above and here (a
     * launcher's SIGKILL while the segment was mapped) leaves a chunk
     * handed out without one, which is not a loss (tracing's LostChunks). */
    __atomic_fetch_add(&g_sp.hdr->chunks_headed, 1, __ATOMIC_RELAXED);
    c->cur = chunk + sizeof(rpg_chunk_header);
    c->end = chunk + RPG_CHUNK_SIZE;
    c->clock_gen = 0;
    if (had_chunk)
        seal_chunk(old_end);
    return 1;
}

void *rpg_record_reserve(uint16_t kind, uint32_t size)
{
    size = (size + 7u) & ~7u;
    uint32_t d = t_rec.depth;
    if (__builtin_expect(size > RPG_MAX_RECORD || d >= 2, 0)) {
        if (g_sp.hdr)
            count(&g_sp.hdr->dropped);
        return NULL;
    }
    t_rec.depth = d + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    cursor *c = &t_rec.c[d];
    char *p = c->cur;
    if (__builtin_expect(p == NULL || (size_t)(c->end - p) < size, 0)) {
        if (!new_chunk(c, size)) {
            if (g_sp.hdr)
                count(&g_sp.hdr->dropped);
            t_rec.depth = d;
            return NULL;
        }
        p = c->cur;
    }
    c->cur = p + size;
    rpg_rec_hdr *h = (rpg_rec_hdr *)p;
    /* The size goes first so a reader can step over this record if the
     * process dies before it is published. */
    __atomic_store_n(&h->size, size, __ATOMIC_RELAXED);
    h->kind = kind;
    h->version = 1;
    return p;
}

void rpg_record_publish(void *rec)
{
    rpg_rec_hdr h;
    memcpy(&h, rec, sizeof h);
    h.commit = RPG_COMMIT;
    uint64_t w;
    memcpy(&w, &h, sizeof w);
    __atomic_store_n((uint64_t *)rec, w, __ATOMIC_RELEASE);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t_rec.depth--;
}

/* ---- per-kind helpers --------------------------------------------------- */

static uint32_t clamp_tail(size_t fixed, size_t len)
{
    if (fixed + len > RPG_MAX_RECORD) {
        if (__atomic_load_n(&g_sp.state, __ATOMIC_ACQUIRE) == SPOOL_READY)
            count(&g_sp.hdr->truncated);
        else
            __atomic_fetch_add(&g_truncated_early, 1, __ATOMIC_RELAXED);
        return (uint32_t)(RPG_MAX_RECORD - fixed);
    }
    return (uint32_t)len;
}

int rpg_record_api(uint16_t kind, uint32_t domain, uint32_t function, uint64_t correlation_id,
                   uint64_t start_ns, uint64_t end_ns, const void *args, uint32_t args_size)
{
    return rpg__record_api_fast(kind, domain, function, correlation_id, start_ns, end_ns, args,
                                args_size);
}

/* Everything the inline fast path leaves: a new chunk, a long argument
 * blob, values that do not fit the compact record (written as version 1). */
int rpg__record_api_slow(uint16_t kind, uint32_t domain, uint32_t function,
                         uint64_t correlation_id, uint64_t start_ns, uint64_t end_ns,
                         const void *args, uint32_t args_size)
{
    if (function <= 0xffffu && domain <= 0xffu && end_ns >= start_ns &&
        end_ns - start_ns <= 0xffffffffu && args_size <= RPG_MAX_RECORD - sizeof(rpg_api_rec)) {
        uint32_t size = ((uint32_t)sizeof(rpg_api_rec2) + args_size + 7u) & ~7u;
        rpg_api_rec2 *r = rpg_record_reserve(kind, size);
        if (!r)
            return -1;
        r->h.version = 2;
        r->function = (uint16_t)function;
        r->domain = (uint8_t)domain;
        r->args_pad = (uint8_t)(size - sizeof *r - args_size);
        r->duration_ns = (uint32_t)(end_ns - start_ns);
        r->correlation_id = correlation_id;
        r->start_ns = start_ns;
        if (args_size)
            memcpy(r + 1, args, args_size);
        rpg_record_publish(r);
        return 0;
    }
    args_size = clamp_tail(sizeof(rpg_api_rec), args_size);
    rpg_api_rec *r = rpg_record_reserve(kind, (uint32_t)sizeof *r + args_size);
    if (!r)
        return -1;
    r->domain = domain;
    r->function = function;
    r->tid = rpg_tid();
    r->args_size = args_size;
    r->correlation_id = correlation_id;
    r->start_ns = start_ns;
    r->end_ns = end_ns;
    if (args_size)
        memcpy(r + 1, args, args_size);
    rpg_record_publish(r);
    return 0;
}

/* Everything rpg__record_api_stamped_fast leaves. Tick stamps stay ticks
 * (a version-3 record) when the record fits the compact layout: the current
 * anchor goes into the chunk first unless the chunk already has it, and
 * both go into the same chunk. Otherwise the stamps are converted here.
 * The thread's depth stays raised from the room check to the last store, so
 * a signal handler that records meanwhile uses the other cursor and cannot
 * come between the clock record and the record it converts. */
int rpg__record_api_stamped_slow(uint16_t kind, uint32_t domain, uint32_t function,
                                 uint64_t correlation_id, uint64_t start, uint64_t end,
                                 const void *args, uint32_t args_size)
{
    rpg_clock_anchor *a = __atomic_load_n(&rpg__clock, __ATOMIC_ACQUIRE);
    uint32_t d = t_rec.depth;
    if (!a || ((start | end) & RPG_STAMP_NS) || end < start || end - start > 0xffffffffu ||
        function > 0xffffu || domain > 0xffu || args_size > RPG_API2_MAX_ARGS || d >= 2)
        return rpg__record_api_slow(kind, domain, function, correlation_id,
                                    rpg__stamp_ns(a, start), rpg__stamp_ns(a, end), args,
                                    args_size);
    uint32_t size = ((uint32_t)sizeof(rpg_api_rec2) + args_size + 7u) & ~7u;
    uint32_t with_clock = (uint32_t)sizeof(rpg_clock_rec) + size;
    t_rec.depth = d + 1;
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    cursor *c = &t_rec.c[d];
    uint32_t need = c->clock_gen == a->gen ? size : with_clock;
    if (c->cur == NULL || (size_t)(c->end - c->cur) < need) {
        if (!new_chunk(c, with_clock)) { /* a new chunk has no clock record yet */
            if (g_sp.hdr)
                count(&g_sp.hdr->dropped);
            t_rec.depth = d;
            __atomic_signal_fence(__ATOMIC_SEQ_CST);
            return -1;
        }
    }
    char *p = c->cur;
    if (c->clock_gen != a->gen) {
        rpg_clock_rec *k = (rpg_clock_rec *)p;
        __atomic_store_n(&k->h.size, (uint32_t)sizeof *k, __ATOMIC_RELAXED);
        k->tsc = a->tsc;
        k->ns = a->ns;
        k->mult = a->mult;
        uint64_t w = (uint64_t)sizeof *k | (uint64_t)RPG_KIND_CLOCK << 32 | (uint64_t)1 << 48 |
                     (uint64_t)RPG_COMMIT << 56;
        __atomic_store_n((uint64_t *)p, w, __ATOMIC_RELEASE);
        p += sizeof *k;
        c->cur = p;
        c->clock_gen = a->gen;
    }
    c->cur = p + size;
    rpg__put_api_rec2(p, size, kind, 3, domain, function, correlation_id, start,
                      (uint32_t)(end - start), args, args_size);
    __atomic_signal_fence(__ATOMIC_SEQ_CST);
    t_rec.depth = d;
    return 0;
}

int rpg_record_marker(uint32_t domain, uint32_t function, uint64_t correlation_id,
                      uint64_t start_ns, uint64_t end_ns, uint64_t range_id, const char *msg,
                      size_t msg_len)
{
    uint32_t len = msg ? clamp_tail(sizeof(rpg_marker_rec), msg_len) : 0;
    rpg_marker_rec *r = rpg_record_reserve(RPG_KIND_MARKER, (uint32_t)sizeof *r + len);
    if (!r)
        return -1;
    r->domain = domain;
    r->function = function;
    r->tid = rpg_tid();
    r->msg_len = len;
    r->correlation_id = correlation_id;
    r->start_ns = start_ns;
    r->end_ns = end_ns;
    r->range_id = range_id;
    if (len)
        memcpy(r + 1, msg, len);
    rpg_record_publish(r);
    return 0;
}

uint32_t rpg__status_seen; /* atomic: bit N set once status string N (< 32) was recorded */

int rpg_record_string(uint32_t table, uint64_t id, const char *s, size_t len)
{
    if (table == RPG_STRTAB_STATUS && id < 32) /* hsa_init.c reads what the shim noted */
        __atomic_fetch_or(&rpg__status_seen, 1u << id, __ATOMIC_RELEASE);
    uint32_t l = clamp_tail(sizeof(rpg_string_rec), len);
    rpg_string_rec *r = rpg_record_reserve(RPG_KIND_STRING, (uint32_t)sizeof *r + l);
    if (!r)
        return -1;
    r->table = table;
    r->len = l;
    r->id = id;
    memcpy(r + 1, s, l);
    rpg_record_publish(r);
    return 0;
}

/* Copies a caller-filled fixed record plus up to two tails. */
static int record_copy(uint16_t kind, const void *src, size_t fixed, const void *t1, size_t l1,
                       const void *t2, size_t l2, uint32_t *tid_field_offset)
{
    void *r = rpg_record_reserve(kind, (uint32_t)(fixed + l1 + l2));
    if (!r)
        return -1;
    memcpy((char *)r + sizeof(rpg_rec_hdr), (const char *)src + sizeof(rpg_rec_hdr),
           fixed - sizeof(rpg_rec_hdr));
    if (tid_field_offset) {
        uint32_t *tid = (uint32_t *)((char *)r + *tid_field_offset);
        if (*tid == 0)
            *tid = rpg_tid();
    }
    if (l1)
        memcpy((char *)r + fixed, t1, l1);
    if (l2)
        memcpy((char *)r + fixed + l1, t2, l2);
    rpg_record_publish(r);
    return 0;
}

#define TID_OFFSET(type) (uint32_t[]){(uint32_t)__builtin_offsetof(type, tid)}

int rpg_record_kernel_dispatch(const rpg_kernel_dispatch_rec *r)
{
    return record_copy(RPG_KIND_KERNEL_DISPATCH, r, sizeof *r, NULL, 0, NULL, 0,
                       TID_OFFSET(rpg_kernel_dispatch_rec));
}

int rpg_record_memory_copy(const rpg_memory_copy_rec *r)
{
    return record_copy(RPG_KIND_MEMORY_COPY, r, sizeof *r, NULL, 0, NULL, 0,
                       TID_OFFSET(rpg_memory_copy_rec));
}

int rpg_record_memory_allocation(const rpg_memory_allocation_rec *r)
{
    return record_copy(RPG_KIND_MEMORY_ALLOCATION, r, sizeof *r, NULL, 0, NULL, 0,
                       TID_OFFSET(rpg_memory_allocation_rec));
}

int rpg_record_scratch_memory(const rpg_scratch_memory_rec *r)
{
    return record_copy(RPG_KIND_SCRATCH_MEMORY, r, sizeof *r, NULL, 0, NULL, 0,
                       TID_OFFSET(rpg_scratch_memory_rec));
}

int rpg_record_agent_info(const rpg_agent_info_rec *r)
{
    return record_copy(RPG_KIND_AGENT_INFO, r, sizeof *r, NULL, 0, NULL, 0, NULL);
}

int rpg_record_kernel_symbol(const rpg_kernel_symbol_rec *r, const char *name, size_t name_len)
{
    rpg_kernel_symbol_rec c = *r;
    c.name_len = clamp_tail(sizeof c, name_len);
    return record_copy(RPG_KIND_KERNEL_SYMBOL, &c, sizeof c, name, c.name_len, NULL, 0, NULL);
}

int rpg_record_code_object(const rpg_code_object_rec *r, const char *uri, size_t uri_len)
{
    rpg_code_object_rec c = *r;
    c.uri_len = clamp_tail(sizeof c, uri_len);
    return record_copy(RPG_KIND_CODE_OBJECT, &c, sizeof c, uri, c.uri_len, NULL, 0, NULL);
}

int rpg_record_counter_sample(const rpg_counter_sample_rec *r, const rpg_counter_dim *dims,
                              const char *name, size_t name_len)
{
    rpg_counter_sample_rec c = *r;
    size_t dl = (size_t)c.dim_count * sizeof(rpg_counter_dim);
    if (sizeof c + dl > RPG_MAX_RECORD) {
        if (g_sp.hdr)
            count(&g_sp.hdr->dropped);
        return -1;
    }
    c.name_len = clamp_tail(sizeof c + dl, name_len);
    return record_copy(RPG_KIND_COUNTER_SAMPLE, &c, sizeof c, dims, dl, name, c.name_len, NULL);
}

/* ---- process life ------------------------------------------------------- */

static void before_fork(void)
{
    if (!__atomic_load_n(&g_active, __ATOMIC_SEQ_CST))
        return;
    pthread_mutex_lock(&g_lock);
    g_fork_locked = 1;
}

static void after_fork_parent(void)
{
    if (!g_fork_locked)
        return;
    g_fork_locked = 0;
    pthread_mutex_unlock(&g_lock);
}

/* The child must never write into its parent's file: forget it (the pages
 * stay the parent's) and start a new spool on the child's first event. Only
 * the forking thread exists in the child, so its thread state is ours to
 * reset. A process that was not active when before_fork looked may have
 * become active since, in another thread (which then held g_lock, possibly
 * half-way through opening the spool): the reset below copes with any state
 * that thread may have left. */
static void after_fork_child(void)
{
    if (!__atomic_load_n(&g_active, __ATOMIC_RELAXED))
        return;
    g_fork_locked = 0;
    g_full_skip = 0; /* the child gets a spool of its own */
    pthread_mutex_init(&g_lock, NULL);
    g_pid = (int32_t)getpid();
    uint32_t mapped = g_sp.mapped_max + 1 < MAX_SEGMENTS ? g_sp.mapped_max + 1 : MAX_SEGMENTS;
    for (uint32_t i = 0; i < mapped; i++) {
        if (g_sp.segments[i]) {
            munmap(g_sp.segments[i], RPG_SEGMENT_SIZE);
            g_sp.segments[i] = NULL;
        }
    }
    g_sp.mapped_max = 0;
    /* Only our own descriptor: the app may have closed it and reused the number. */
    struct stat st;
    if (g_sp.fd >= 0 && fstat(g_sp.fd, &st) == 0 && st.st_dev == g_sp.dev && st.st_ino == g_sp.ino)
        close(g_sp.fd);
    g_sp.fd = -1;
    g_sp.hdr = NULL;
    g_sp.fork_generation++;
    if (g_sp.state != SPOOL_OFF)
        g_sp.state = SPOOL_NONE;
    memset(&t_rec.c, 0, sizeof t_rec.c);
    pthread_mutex_init(&g_free_lock, NULL);
    g_nfree = 0;
    t_rec.depth = 0;
    t_rec.holds_lock = 0;
    t_rec.tid = 0;
    /* The helper stayed in the parent; a child that records a lot asks for
     * its own. */
    rpg__helper = HELPER_NONE;
    g_prefaulted = 0;
    g_helper_kick = 0;
    g_helper_sleeping = 0;
}

static int env_on(const char *name)
{
    const char *v = rpg_env(name);
    return v && v[0] == '1' && v[1] == 0;
}

static int g_launch;          /* the constructor found the spool directory */
static int g_fork_registered; /* before_fork & co registered in this image */

int rpg__recorder_launch_mode(void) { return g_launch; }

/* The constructor's work, from the environment contract (rpg_env): in
 * launch mode the environment, in attach mode the configuration the CLI
 * wrote, read by the control thread before it redirects any call here. */
int rpg__recorder_setup(int attach)
{
    g_sp.fd = -1;
    g_pid = (int32_t)getpid();
    const char *dir = rpg_env(RPG_ENV_GO_SPOOL_DIR);
    if (!dir || !dir[0] || strlen(dir) >= sizeof g_sp.dir - 64) {
        g_sp.state = SPOOL_OFF;
        return attach ? -EINVAL : 0;
    }
    if (attach) {
        g_attach_mode = 1;
        g_helper_stop = 0;
        g_helper_joinable = 0;
        rpg__helper = HELPER_NONE;
        g_prefaulted = 0;
        g_full_skip = 0;
        g_nfree = 0;
        g_sp.hdr = NULL;
        g_sp.mapped_max = 0;
        __atomic_store_n(&g_sp.state, SPOOL_NONE, __ATOMIC_RELEASE);
    } else {
        g_launch = 1;
    }
    strcpy(g_sp.dir, dir);
    rpg__notes_init(dir);
    static const struct {
        const char *env;
        uint32_t bit;
    } vars[] = {
        RPG_DOMAIN_VARS /* each domain's variable and bit (rpg_domains_gen.h) */
        /* --kernel-rename names dispatches after their ROCTx ranges: the
         * ranges are recorded even without --marker-trace (the writers then
         * read them for the names and show them nowhere), as rocprofv3 does. */
        {RPG_ENV_KERNEL_RENAME, RPG_DOMAIN_MARKER},
    };
    uint32_t mask = 0;
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        if (env_on(vars[i].env))
            mask |= vars[i].bit;
    rpg_domains = mask;
    /* Registered under this library's __dso_handle: an attached library's
     * dlclose removes them. */
    if (!g_fork_registered) {
        pthread_atfork(before_fork, after_fork_parent, after_fork_child);
        g_fork_registered = 1;
    }
    /* The clock's first (tsc, ns) pair now, so that its 20 ms learning
     * window (clock_gettime on every read, ~3x the cost of rdtsc) passes
     * during the app's own start-up (HIP/HSA initialisation takes longer)
     * instead of during its first traced calls. One clock read per profiled
     * process with something to record (plus two cpuid without the
     * launcher's RPG_ENV_GO_TSC). */
    if (mask)
        rpg__clock_start();
    return 0;
}

__attribute__((constructor)) static void rpg_init(void) { (void)rpg__recorder_setup(0); }

void rpg__recorder_finish(int unmap)
{
    if (__atomic_load_n(&g_helper_joinable, __ATOMIC_ACQUIRE)) {
        __atomic_store_n(&g_helper_stop, 1, __ATOMIC_RELEASE);
        helper_kick();
        pthread_join(g_helper_thread, NULL);
        g_helper_joinable = 0;
    }
    __atomic_store_n(&rpg__helper, HELPER_FAILED, __ATOMIC_RELEASE); /* none started from now */
    static pthread_once_t fresh = PTHREAD_ONCE_INIT;
    if (unmap && memcmp(&g_exit_once, &fresh, sizeof fresh) != 0) {
        /* Its destructor is this library's code. */
        pthread_key_delete(g_exit_key);
        g_exit_once = fresh;
    }
    pthread_mutex_lock(&g_lock);
    __atomic_store_n(&g_sp.state, SPOOL_OFF, __ATOMIC_RELEASE);
    if (unmap) {
        for (uint32_t i = 0; i < g_sp.mapped_max && i < MAX_SEGMENTS; i++) {
            if (g_sp.segments[i]) {
                munmap(g_sp.segments[i], RPG_SEGMENT_SIZE);
                g_sp.segments[i] = NULL;
            }
        }
        g_sp.mapped_max = 0;
        g_sp.hdr = NULL;
        struct stat st;
        if (g_sp.fd >= 0 && fstat(g_sp.fd, &st) == 0 && st.st_dev == g_sp.dev &&
            st.st_ino == g_sp.ino)
            close(g_sp.fd);
        g_sp.fd = -1;
    }
    pthread_mutex_lock(&g_free_lock);
    g_nfree = 0;
    pthread_mutex_unlock(&g_free_lock);
    pthread_mutex_unlock(&g_lock);
}

void rpg__recorder_child_off(void)
{
    __atomic_store_n(&rpg_domains, 0, __ATOMIC_SEQ_CST);
    /* after_fork_child (registered before) gave the parent's spool back. */
    __atomic_store_n(&g_sp.state, SPOOL_OFF, __ATOMIC_RELEASE);
    __atomic_store_n(&rpg__helper, HELPER_FAILED, __ATOMIC_RELEASE);
    g_helper_joinable = 0;
}
