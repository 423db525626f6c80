/* attach_hsa: an HSA app started with no profiler that loads the preload
 * library itself halfway and attaches it (what rocprof-go --attach makes a
 * process do through ptrace), for the attach-mode tests of the HSA side.
 *
 * Usage: attach_hsa CODE_OBJECT PRELOAD_LIB CONF
 *
 * It loads module_fill from CODE_OBJECT and creates its queue, dispatches
 * BEFORE (3) kernels, then dlopens PRELOAD_LIB and calls
 * rpg_attach_start(CONF) and prints "attached <rc>". Then, per line on
 * stdin:
 *   run N S   N dispatches, every S-th (and the last) with the app's
 *             completion signal, the rest without; waits for the last;
 *             prints "ran N"
 *   load      loads and freezes a second executable of CODE_OBJECT,
 *             dispatches its module_fill once (waited); prints "loaded"
 *   prof      prints "profiling 0" or "profiling 1": the queue's
 *             AMD_QUEUE_PROPERTIES_ENABLE_PROFILING bit (amd_queue_t's
 *             queue_properties, byte 180), which the attach may set and
 *             must give back
 *   swap      two producers' order: reserves two slots, writes the second
 *             (with the app's signal) and rings its doorbell, then writes the
 *             first and rings; waits for both; prints "swapped"
 *   newq      creates a second queue (while attached: its creation is
 *             seen), dispatches 3 kernels on it (the last waited) and
 *             destroys it; prints "newq"
 *   start N G N kernels of grid G, the last with the app's signal, not
 *             waited for; prints "started"
 *   bg N G    N kernels of grid G, none with a signal, not waited for;
 *             prints "started"
 *   wait      waits for the app's signal; prints "waited"
 *   alloc     allocates and frees 64 KiB from the GPU's first global pool
 *             (hsa_amd_memory_pool_allocate/free) and 8 KiB from its first
 *             allocatable region (hsa_memory_allocate/free); prints "alloced"
 *   scratch B one dispatch needing B bytes of scratch per work-item (the
 *             packet's private_segment_size), waited; prints "scratched"
 *   wrap      plays another tool that replaced a slot of the runtime's
 *             core API table before the attach: the slot hsa_system_get_info
 *             jumps through (found by decoding that exported stub) gets a
 *             function of this program that calls the runtime's; prints
 *             "wrapped"; "unwrap" puts the runtime's back, prints
 *             "unwrapped"
 *   fork      forks; the child names the module that hsa_system_get_info's
 *             table slot points into ("child slot <file name>", dladdr) and
 *             exits; the parent waits and prints "forked <child's status>"
 *   copy N    N async copies of 4 KiB between two buffers of the GPU's
 *             first global pool (hsa_amd_memory_async_copy), each on the
 *             app's copy signal set to 1 by a store and waited; prints
 *             "copied N"
 *   copyreset one copy held back by a dependency signal, its completion
 *             signal stored to 1 again while it is pending (an app reusing
 *             its signal too early: the attach counts the copy lost), then
 *             released and waited; prints "copyreset"
 *   copyprof B  hsa_amd_profiling_async_copy_enable(B); prints "copyprof B"
 *   copytime  one copy on a new signal, waited, and its
 *             hsa_amd_profiling_get_async_copy_time: prints "copytime
 *             <end - start>" (0 when the copy was not stamped)
 *   attach    loads PRELOAD_LIB and calls rpg_attach_start(CONF) again
 *             (after a detach: a re-attach); prints "attached <rc>"
 *   quit      destroys the queue and its signal, exits 0
 * Every packet goes through the app's own GOT: hsa_queue_add_write_index_*,
 * hsa_signal_store_* on the doorbell, as HIP does. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <hsa/hsa.h>
#include <hsa/hsa_ext_amd.h>
#include "hsa_app.h" /* CHECK, gpu_cb (testdata/apps) */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char file[1 << 22];
static const char *elf;
static size_t elen;

/* The amdgcn ELF of a code object file (hipcc --genco writes an offload
 * bundle). */
static void read_code_object(const char *path)
{
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        perror(path);
        exit(2);
    }
    size_t flen = fread(file, 1, sizeof file, fp);
    fclose(fp);
    elf = file;
    elen = flen;
    if (flen > 32 && !memcmp(file, "__CLANG_OFFLOAD_BUNDLE__", 24)) {
        uint64_t nent, o = 32;
        memcpy(&nent, file + 24, 8);
        for (uint64_t e = 0; e < nent && o + 24 <= flen; e++) {
            uint64_t off, size, idlen;
            memcpy(&off, file + o, 8);
            memcpy(&size, file + o + 8, 8);
            memcpy(&idlen, file + o + 16, 8);
            if (o + 24 + idlen > flen)
                break;
            if (memmem(file + o + 24, idlen, "amdgcn", 6) && off + size <= flen)
                elf = file + off, elen = size;
            o += 24 + idlen;
        }
    }
}

static uint64_t load_kernel(hsa_agent_t gpu)
{
    hsa_code_object_reader_t rd;
    CHECK(hsa_code_object_reader_create_from_memory(elf, elen, &rd));
    hsa_executable_t exe;
    CHECK(hsa_executable_create_alt(HSA_PROFILE_BASE, HSA_DEFAULT_FLOAT_ROUNDING_MODE_DEFAULT, NULL,
                                    &exe));
    CHECK(hsa_executable_load_agent_code_object(exe, gpu, rd, NULL, NULL));
    CHECK(hsa_executable_freeze(exe, NULL));
    hsa_executable_symbol_t sym;
    CHECK(hsa_executable_get_symbol_by_name(exe, "module_fill.kd", &gpu, &sym));
    uint64_t ko;
    CHECK(hsa_executable_symbol_get_info(sym, HSA_EXECUTABLE_SYMBOL_INFO_KERNEL_OBJECT, &ko));
    return ko;
}

static hsa_queue_t *q;
static hsa_signal_t done;
static uint32_t scratch_bytes; /* the next dispatch's private_segment_size */

static hsa_status_t pool_cb(hsa_amd_memory_pool_t p, void *d)
{
    hsa_amd_segment_t seg;
    bool ok = false;
    if (hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_SEGMENT, &seg) != HSA_STATUS_SUCCESS ||
        seg != HSA_AMD_SEGMENT_GLOBAL ||
        hsa_amd_memory_pool_get_info(p, HSA_AMD_MEMORY_POOL_INFO_RUNTIME_ALLOC_ALLOWED, &ok) !=
            HSA_STATUS_SUCCESS ||
        !ok)
        return HSA_STATUS_SUCCESS;
    *(hsa_amd_memory_pool_t *)d = p;
    return HSA_STATUS_INFO_BREAK;
}

static hsa_status_t region_cb(hsa_region_t r, void *d)
{
    hsa_region_segment_t seg;
    bool ok = false;
    if (hsa_region_get_info(r, HSA_REGION_INFO_SEGMENT, &seg) != HSA_STATUS_SUCCESS ||
        seg != HSA_REGION_SEGMENT_GLOBAL ||
        hsa_region_get_info(r, HSA_REGION_INFO_RUNTIME_ALLOC_ALLOWED, &ok) != HSA_STATUS_SUCCESS || !ok)
        return HSA_STATUS_SUCCESS;
    *(hsa_region_t *)d = r;
    return HSA_STATUS_INFO_BREAK;
}

typedef hsa_status_t (*get_info_fn)(hsa_system_info_t, void *);
static get_info_fn runtime_get_info;
static void **wrapped_slot;

static hsa_status_t tool_get_info(hsa_system_info_t a, void *v)
{
    return runtime_get_info(a, v);
}

/* The slot the exported stub jumps through: [endbr64] mov rax, [rip+d];
 * jmp [rax+disp8]. */
static void **get_info_slot(void)
{
    const uint8_t *p = (const uint8_t *)dlsym(RTLD_DEFAULT, "hsa_system_get_info");
    size_t i = 0;
    if (p && p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        i = 4;
    if (!p || p[i] != 0x48 || p[i + 1] != 0x8b || p[i + 2] != 0x05 || p[i + 7] != 0xff || p[i + 8] != 0x60) {
        fprintf(stderr, "hsa_system_get_info is not the stub this test knows\n");
        exit(6);
    }
    int32_t d;
    memcpy(&d, p + i + 3, 4);
    char *table = *(char **)(p + i + 7 + d);
    return (void **)(table + p[i + 9]);
}

static void alloc_free(hsa_agent_t gpu)
{
    hsa_amd_memory_pool_t pool = {0};
    hsa_amd_agent_iterate_memory_pools(gpu, pool_cb, &pool);
    hsa_region_t region = {0};
    hsa_agent_iterate_regions(gpu, region_cb, &region);
    if (!pool.handle || !region.handle) {
        fprintf(stderr, "no allocatable pool or region\n");
        exit(5);
    }
    void *p = NULL, *r = NULL;
    CHECK(hsa_amd_memory_pool_allocate(pool, 65536, 0, &p));
    CHECK(hsa_amd_memory_pool_free(p));
    CHECK(hsa_memory_allocate(region, 8192, &r));
    CHECK(hsa_memory_free(r));
}

/* Writes the dispatch packet of slot i (reserved) and rings the doorbell. */
/* The copy commands: n copies (reset: one held back, its signal reset
 * while pending). */
static void copies(hsa_agent_t gpu, int n, int reset)
{
    hsa_amd_memory_pool_t pool = {0};
    hsa_amd_agent_iterate_memory_pools(gpu, pool_cb, &pool);
    void *a = NULL, *b = NULL;
    CHECK(hsa_amd_memory_pool_allocate(pool, 4096, 0, &a));
    CHECK(hsa_amd_memory_pool_allocate(pool, 4096, 0, &b));
    hsa_signal_t s, dep;
    CHECK(hsa_signal_create(1, 0, NULL, &s));
    CHECK(hsa_signal_create(reset ? 1 : 0, 0, NULL, &dep));
    for (int i = 0; i < n; i++) {
        hsa_signal_store_relaxed(s, 1);
        CHECK(hsa_amd_memory_async_copy(b, gpu, a, gpu, 4096, reset ? 1 : 0, reset ? &dep : NULL, s));
        if (reset) {
            hsa_signal_store_relaxed(s, 1);
            hsa_signal_store_relaxed(dep, 0);
        }
        while (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                         HSA_WAIT_STATE_BLOCKED) >= 1)
            ;
    }
    CHECK(hsa_signal_destroy(dep));
    CHECK(hsa_signal_destroy(s));
    CHECK(hsa_amd_memory_pool_free(a));
    CHECK(hsa_amd_memory_pool_free(b));
}

/* One copy on a new signal: its stamped duration (0: none). */
static uint64_t copy_time(hsa_agent_t gpu)
{
    hsa_amd_memory_pool_t pool = {0};
    hsa_amd_agent_iterate_memory_pools(gpu, pool_cb, &pool);
    void *a = NULL, *b = NULL;
    CHECK(hsa_amd_memory_pool_allocate(pool, 4096, 0, &a));
    CHECK(hsa_amd_memory_pool_allocate(pool, 4096, 0, &b));
    hsa_signal_t s;
    CHECK(hsa_signal_create(1, 0, NULL, &s));
    CHECK(hsa_amd_memory_async_copy(b, gpu, a, gpu, 4096, 0, NULL, s));
    while (hsa_signal_wait_scacquire(s, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                     HSA_WAIT_STATE_BLOCKED) >= 1)
        ;
    hsa_amd_profiling_async_copy_time_t t = {0, 0};
    uint64_t d = hsa_amd_profiling_get_async_copy_time(s, &t) == HSA_STATUS_SUCCESS && t.start &&
                         t.end > t.start
                     ? t.end - t.start
                     : 0;
    CHECK(hsa_signal_destroy(s));
    CHECK(hsa_amd_memory_pool_free(a));
    CHECK(hsa_amd_memory_pool_free(b));
    return d;
}

static void write_dispatch(uint64_t i, uint64_t ko, uint32_t grid, int with_signal)
{
    while (i - hsa_queue_load_read_index_scacquire(q) >= q->size) {
    }
    hsa_kernel_dispatch_packet_t *p = (hsa_kernel_dispatch_packet_t *)q->base_address + (i % q->size);
    memset((char *)p + 4, 0, 60);
    p->workgroup_size_x = 64;
    p->workgroup_size_y = p->workgroup_size_z = 1;
    p->grid_size_x = grid;
    p->grid_size_y = p->grid_size_z = 1;
    p->kernel_object = ko;
    p->private_segment_size = scratch_bytes;
    if (with_signal) {
        hsa_signal_store_screlease(done, 1);
        p->completion_signal = done;
    }
    uint16_t h = HSA_PACKET_TYPE_KERNEL_DISPATCH | (1 << HSA_PACKET_HEADER_BARRIER) |
                 (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_ACQUIRE_FENCE_SCOPE) |
                 (HSA_FENCE_SCOPE_SYSTEM << HSA_PACKET_HEADER_RELEASE_FENCE_SCOPE);
    __atomic_store_n((uint32_t *)p, h | (1u << 16), __ATOMIC_RELEASE);
    hsa_signal_store_screlease(q->doorbell_signal, (hsa_signal_value_t)i);
}

static void wait_done(void)
{
    while (hsa_signal_wait_scacquire(done, HSA_SIGNAL_CONDITION_LT, 1, UINT64_MAX,
                                     HSA_WAIT_STATE_BLOCKED) != 0) {
    }
}

static void dispatch(uint64_t ko, uint32_t grid, int with_signal)
{
    write_dispatch(hsa_queue_add_write_index_screlease(q, 1), ko, grid, with_signal);
    if (with_signal)
        wait_done();
}

/* What the CLI's injection makes a thread of the process do. No dlclose:
 * this reference is the injector's, which the library gives back itself
 * when it unloads at the detach. */
static void attach(const char *path, const char *conf)
{
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        fprintf(stderr, "%s\n", dlerror());
        exit(4);
    }
    int (*start)(const char *) = (int (*)(const char *))dlsym(lib, "rpg_attach_start");
    if (!start) {
        fprintf(stderr, "no rpg_attach_start: %s\n", dlerror());
        exit(4);
    }
    printf("attached %d\n", start(conf));
}

int main(int argc, char **argv)
{
    if (argc < 4) {
        fprintf(stderr, "usage: attach_hsa CODE_OBJECT PRELOAD_LIB CONF\n");
        return 2;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    read_code_object(argv[1]);
    CHECK(hsa_init());
    hsa_agent_t gpu = {0};
    hsa_iterate_agents(gpu_cb, &gpu);
    if (!gpu.handle) {
        printf("no gpu\n");
        return 3;
    }
    uint64_t ko = load_kernel(gpu);
    CHECK(hsa_queue_create(gpu, 1024, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX, UINT32_MAX,
                           &q));
    CHECK(hsa_signal_create(1, 0, NULL, &done));
    /* Before the attach: not to be recorded. Grid 64: told apart by size. */
    for (int i = 0; i < 3; i++)
        dispatch(ko, 64, i == 2);

    attach(argv[2], argv[3]);

    char line[128];
    uint64_t ko2 = 0;
    while (fgets(line, sizeof line, stdin)) {
        int n = 0, every = 0;
        if (sscanf(line, "run %d %d", &n, &every) == 2) {
            for (int i = 0; i < n; i++)
                dispatch(ko2 ? ko2 : ko, 256, i == n - 1 || (every > 0 && (i + 1) % every == 0));
            printf("ran %d\n", n);
        } else if (!strncmp(line, "load", 4)) {
            ko2 = load_kernel(gpu);
            dispatch(ko2, 128, 1);
            printf("loaded\n");
        } else if (!strncmp(line, "prof", 4)) {
            uint32_t props;
            memcpy(&props, (const char *)q + 180, 4);
            printf("profiling %u\n", (props >> 3) & 1);
        } else if (!strncmp(line, "newq", 4)) {
            hsa_queue_t *main_q = q;
            CHECK(hsa_queue_create(gpu, 256, HSA_QUEUE_TYPE_MULTI, NULL, NULL, UINT32_MAX,
                                   UINT32_MAX, &q));
            for (int i = 0; i < 3; i++)
                dispatch(ko2 ? ko2 : ko, 1024, i == 2);
            CHECK(hsa_queue_destroy(q));
            q = main_q;
            printf("newq\n");
        } else if (sscanf(line, "start %d %d", &n, &every) == 2) {
            for (int i = 0; i < n; i++)
                write_dispatch(hsa_queue_add_write_index_screlease(q, 1), ko2 ? ko2 : ko,
                               (uint32_t)every, i == n - 1);
            printf("started\n");
        } else if (sscanf(line, "bg %d %d", &n, &every) == 2) {
            for (int i = 0; i < n; i++)
                write_dispatch(hsa_queue_add_write_index_screlease(q, 1), ko2 ? ko2 : ko,
                               (uint32_t)every, 0);
            printf("started\n");
        } else if (!strncmp(line, "wait", 4)) {
            wait_done();
            printf("waited\n");
        } else if (!strncmp(line, "swap", 4)) {
            /* Barrier bits keep the device at the first until it is written. */
            uint64_t first = hsa_queue_add_write_index_screlease(q, 1);
            uint64_t second = hsa_queue_add_write_index_screlease(q, 1);
            write_dispatch(second, ko2 ? ko2 : ko, 512, 1);
            write_dispatch(first, ko2 ? ko2 : ko, 512, 0);
            wait_done();
            printf("swapped\n");
        } else if (!strncmp(line, "wrap", 4)) {
            wrapped_slot = get_info_slot();
            runtime_get_info = (get_info_fn)*wrapped_slot;
            __atomic_store_n(wrapped_slot, (void *)tool_get_info, __ATOMIC_RELEASE);
            uint16_t major = 0;
            CHECK(hsa_system_get_info(HSA_SYSTEM_INFO_VERSION_MAJOR, &major));
            printf("wrapped\n");
        } else if (!strncmp(line, "unwrap", 6)) {
            __atomic_store_n(wrapped_slot, (void *)runtime_get_info, __ATOMIC_RELEASE);
            printf("unwrapped\n");
        } else if (!strncmp(line, "fork", 4)) {
            fflush(stdout);
            pid_t child = fork();
            if (child == 0) {
                Dl_info di;
                void *f = *get_info_slot();
                const char *name = dladdr(f, &di) && di.dli_fname ? strrchr(di.dli_fname, '/') : NULL;
                printf("child slot %s\n", name ? name + 1 : "?");
                fflush(stdout);
                _exit(0);
            }
            int st = -1;
            waitpid(child, &st, 0);
            printf("forked %d\n", st);
        } else if (!strncmp(line, "alloc", 5)) {
            alloc_free(gpu);
            printf("alloced\n");
        } else if (sscanf(line, "scratch %d", &n) == 1) {
            scratch_bytes = (uint32_t)n;
            dispatch(ko2 ? ko2 : ko, 256, 1);
            scratch_bytes = 0;
            printf("scratched\n");
        } else if (sscanf(line, "copy %d", &n) == 1) {
            copies(gpu, n, 0);
            printf("copied %d\n", n);
        } else if (sscanf(line, "copyprof %d", &n) == 1) {
            CHECK(hsa_amd_profiling_async_copy_enable(n != 0));
            printf("copyprof %d\n", n);
        } else if (!strncmp(line, "copytime", 8)) {
            printf("copytime %llu\n", (unsigned long long)copy_time(gpu));
        } else if (!strncmp(line, "copyreset", 9)) {
            copies(gpu, 1, 1);
            printf("copyreset\n");
        } else if (!strncmp(line, "attach", 6)) {
            attach(argv[2], argv[3]);
        } else if (!strncmp(line, "quit", 4)) {
            break;
        }
    }
    CHECK(hsa_queue_destroy(q));
    CHECK(hsa_signal_destroy(done));
    printf("bye\n");
    return 0;
}
