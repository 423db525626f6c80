/*
 * attach_table.c: HSA API tracing, memory allocations and scratch memory
 * while attached (docs/attach.md), through the runtime's own HSA API table.
 *
 * In launch mode ROCR hands the shim its HsaApiTable at OnLoad and the shim
 * wraps its slots (tables.cpp, activity.cpp, scratch.cpp). A process we
 * attach to called no OnLoad, and no Go may enter it: this file finds that
 * same table in the running process and does the same in plain C.
 *
 * Finding the table. Every exported hsa_* function of libhsa-runtime64 is a
 * stub that loads a process-global pointer to its table and jumps through
 * the function's slot (ROCR's hsa_table_interface: `mov rax, [rip+X]; jmp
 * [rax+off]` after an endbr64 where the build has CET; the decoder also takes
 * `lea rax, [rip+X]; mov rax, [rax]`). So for a few stubs of the core and
 * AMD tables we decode those two or three instructions and require: the pointer variable lies in
 * libhsa-runtime64's writable segments, the table it points at also does,
 * the table's version header has a major api_table.h knows and a size that
 * holds the stub's slot, every stub of a table names the same table, and
 * each stub's jump offset is exactly the slot api_table.h gives that
 * function in that major. Then the root table (HsaApiTable) is the one
 * 8-byte-aligned place of those writable segments whose header has a root
 * major api_table.h knows and whose core_ and amd_ext_ members are the two
 * tables just found (ROCR has a second, internal copy of the tables, which
 * the stubs never use: its root names its own copies, so it does not
 * match); exactly one must match. The image, finalizer and tools tables are
 * the root's members, as OnLoad hands them to a tool (ROCR allocates the
 * image and finalizer tables when it loads those extensions; their exported
 * stubs call through an extension object of ROCR's own, not through the API
 * table, in launch mode as here). Before anything is written, every
 * non-null slot of the tables to be wrapped must point into libhsa-runtime64's executable segments (a slot another tool
 * replaced would make our restore someone else's business). Any of this
 * failing refuses the attach with one line naming what was not found; no
 * slot is written on a guess. Measured on the matrix: ROCm 5.2, 6.1, 6.4
 * and 7.2 each give one root, core major 1/2 (125 slots), AMD 48/68/72/76.
 *
 * Hooking. Each wrapped slot gets a wrapper of ours for that function id
 * (atomic 8-byte stores; the old value saved); at the detach, before the
 * in-flight wait (attach.c), each slot that still holds our wrapper gets its
 * old value back (compare-and-swap), so a table is left exactly as found.
 * Every wrapper counts itself in flight (rpg_attach_enter/leave), so the
 * detach waits until no thread is inside one before the library unloads.
 * The wrappers take and forward ten 64-bit integer arguments: api_table.h's
 * generator checked that every traced function's arguments and result
 * travel in integer registers and that none takes more than ten; the four
 * words past a caller's real stack arguments that a wrapper of a shorter
 * function reads are its caller's frame, and the callee ignores them. A
 * function that takes a struct by value (nargs -1: hsa_ext_program_finalize,
 * which no runtime of the matrix implements) is left untraced.
 *
 * The records are launch mode's: an HSA_API record per call (the table's
 * domain, the function id, its own correlation id and the caller's as
 * parent: rpg__api_begin_fast/rpg__api_end_fast, as tables.cpp), the
 * function names as the string tables of the domains on; MEMORY_ALLOCATION
 * records from hsa_amd_memory_pool_allocate/free, hsa_memory_allocate/free
 * and hsa_amd_vmem_handle_create/release as activity.cpp writes them (under
 * the API wrapper of the same call, as in launch mode); SCRATCH_MEMORY
 * records from the tools table's event slots as scratch.cpp writes them
 * (ROCR 6.1 and later; a runtime without a tools table notes the domain
 * unavailable, as launch mode does).
 *
 * The runtime functions attach_hsa.c calls for itself (agents, signals,
 * profiling times) are the table's original slots (rpg__table_original), so
 * that its own calls are not recorded as the app's, as the shim calls
 * through its saved copies.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../api_table.h"
#include "attach_internal.h"
#include "rpg_internal.h"

/* ---- the tables ----------------------------------------------------------------- */

enum { T_CORE, T_AMD, T_IMAGE, T_FIN, NT };
#define MAXF 256
#define NARGS_MAX 10
#define VER 16 /* ApiTableVersion: major, minor (the table's size in bytes), step, reserved */

static const char *const tname[NT] = {"core", "AMD extension", "image extension", "finalizer extension"};
static const uint32_t tdomain[NT] = {RPG_API_HSA_CORE, RPG_API_HSA_AMD_EXT, RPG_API_HSA_IMAGE_EXT,
                                     RPG_API_HSA_FINALIZE_EXT};
static const uint32_t tbit[NT] = {RPG_DOMAIN_HSA_CORE, RPG_DOMAIN_HSA_AMD_EXT, RPG_DOMAIN_HSA_IMAGE_EXT,
                                  RPG_DOMAIN_HSA_FINALIZER_EXT};
#define LAYOUTS(l) l, sizeof l / sizeof l[0]
static const struct {
    const struct rpg_api_layout *l;
    size_t n;
    uint32_t count;
} tlayouts[NT] = {
    {LAYOUTS(RPG_HSA_CORE_FUNCS_LAYOUTS), RPG_HSA_CORE_FUNCS_COUNT},
    {LAYOUTS(RPG_HSA_AMD_EXT_FUNCS_LAYOUTS), RPG_HSA_AMD_EXT_FUNCS_COUNT},
    {LAYOUTS(RPG_HSA_IMAGE_EXT_FUNCS_LAYOUTS), RPG_HSA_IMAGE_EXT_FUNCS_COUNT},
    {LAYOUTS(RPG_HSA_FINALIZER_EXT_FUNCS_LAYOUTS), RPG_HSA_FINALIZER_EXT_FUNCS_COUNT},
};
#undef LAYOUTS
_Static_assert(RPG_HSA_CORE_FUNCS_COUNT <= MAXF && RPG_HSA_AMD_EXT_FUNCS_COUNT <= MAXF,
               "function ids exceed the slot maps");

#define NAME_OF(id, name, n) [id] = #name,
static const char *const core_names[] = {RPG_HSA_CORE_FUNCS(NAME_OF)};
static const char *const amd_names[] = {RPG_HSA_AMD_EXT_FUNCS(NAME_OF)};
static const char *const image_names[] = {RPG_HSA_IMAGE_EXT_FUNCS(NAME_OF)};
static const char *const fin_names[] = {RPG_HSA_FINALIZER_EXT_FUNCS(NAME_OF)};
#undef NAME_OF
static const char *const *const tnames[NT] = {core_names, amd_names, image_names, fin_names};
static const uint32_t tcount[NT] = {RPG_HSA_CORE_FUNCS_COUNT, RPG_HSA_AMD_EXT_FUNCS_COUNT,
                                    RPG_HSA_IMAGE_EXT_FUNCS_COUNT, RPG_HSA_FINALIZER_EXT_FUNCS_COUNT};

#define NARGS_OF(id, name, n) [id] = (n),
static const int8_t core_nargs[] = {RPG_HSA_CORE_FUNCS(NARGS_OF)};
static const int8_t amd_nargs[] = {RPG_HSA_AMD_EXT_FUNCS(NARGS_OF)};
static const int8_t image_nargs[] = {RPG_HSA_IMAGE_EXT_FUNCS(NARGS_OF)};
static const int8_t fin_nargs[] = {RPG_HSA_FINALIZER_EXT_FUNCS(NARGS_OF)};
#undef NARGS_OF
static const int8_t *const tnargs[NT] = {core_nargs, amd_nargs, image_nargs, fin_nargs};

#define ID_OF_CORE(id, name, n) CORE_##name = id,
#define ID_OF_AMD(id, name, n) AMD_##name = id,
#define ID_OF_TOOL(id, name) TOOL_##name = id,
enum { RPG_HSA_CORE_FUNCS(ID_OF_CORE) };
enum { RPG_HSA_AMD_EXT_FUNCS(ID_OF_AMD) };
enum { RPG_HSA_TOOLS_EVENTS(ID_OF_TOOL) };
#undef ID_OF_CORE
#undef ID_OF_AMD
#undef ID_OF_TOOL

typedef uint64_t (*fn10)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t,
                         uint64_t, uint64_t, uint64_t);

typedef struct table {
    char *base; /* its version header; NULL when not found */
    const struct rpg_api_layout *layout;
    uint32_t nslots; /* slots of the known layout the runtime has */
    int16_t slot[MAXF];
    void *original[MAXF]; /* what each function's slot held when found */
    uint64_t found_hash;  /* FNV-1a of its slots as found (the debug line) */
} table;
static table g_tab[NT];
static char *g_root;  /* HsaApiTable */
static char *g_tools; /* ToolsApiTable, NULL before ROCR 6.1 */
static uint32_t g_tools_n;
static uint64_t g_tools_hash;

/* What each wrapper calls: the original, or the allocation hook over it. */
static fn10 g_real[NT][MAXF];

/* Every slot written, for the restore. */
typedef struct saved {
    void **slot;
    void *old, *mine;
} saved;
#define MAXSAVED 512
static saved g_saved[MAXSAVED];
static int g_nsaved;

/* ---- libhsa-runtime64's segments ------------------------------------------------------ */

typedef struct range {
    uintptr_t lo, hi;
} range;
#define MAXSEG 16
static struct {
    uintptr_t probe;
    range w[MAXSEG], x[MAXSEG];
    int nw, nx, found;
} g_mod;

static int mod_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    int holds = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && g_mod.probe >= a && g_mod.probe < a + ph->p_memsz)
            holds = 1;
    }
    if (!holds)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        range r = {info->dlpi_addr + ph->p_vaddr, info->dlpi_addr + ph->p_vaddr + ph->p_memsz};
        if ((ph->p_flags & PF_W) && g_mod.nw < MAXSEG)
            g_mod.w[g_mod.nw++] = r;
        if ((ph->p_flags & PF_X) && g_mod.nx < MAXSEG)
            g_mod.x[g_mod.nx++] = r;
    }
    g_mod.found = 1;
    return 1;
}

static int in_ranges(const range *r, int n, uintptr_t p, size_t len)
{
    for (int i = 0; i < n; i++)
        if (p >= r[i].lo && p + len <= r[i].hi && p + len >= p)
            return 1;
    return 0;
}
#define IN_DATA(p, len) in_ranges(g_mod.w, g_mod.nw, (uintptr_t)(p), (len))
#define IN_TEXT(p) in_ranges(g_mod.x, g_mod.nx, (uintptr_t)(p), 1)

/* ---- the stubs ------------------------------------------------------------------------ */

/* Decodes an exported stub: [endbr64] then mov r, [rip+d] | lea r, [rip+d];
 * mov r, [r]; then jmp [r+disp]. *var: the pointer variable's address,
 * *disp: the slot's byte offset. 0 when the code is not that. */
static int decode_stub(const uint8_t *p, uintptr_t *var, uint32_t *disp)
{
    size_t i = 0;
    if (p[0] == 0xf3 && p[1] == 0x0f && p[2] == 0x1e && p[3] == 0xfa)
        i = 4;
    if (p[i] != 0x48 || (p[i + 1] != 0x8b && p[i + 1] != 0x8d) || (p[i + 2] & 0xc7) != 0x05)
        return 0;
    int lea = p[i + 1] == 0x8d;
    int reg = (p[i + 2] >> 3) & 7;
    int32_t d;
    memcpy(&d, p + i + 3, 4);
    i += 7;
    *var = (uintptr_t)(p + i) + (intptr_t)d;
    if (reg == 4 || reg == 5)
        return 0; /* rsp/rbp as a base need a SIB byte or mean rip: not a stub */
    if (lea) {
        /* mov reg, [reg] */
        if (p[i] != 0x48 || p[i + 1] != 0x8b || p[i + 2] != (uint8_t)((reg << 3) | reg))
            return 0;
        i += 3;
    }
    /* jmp [reg + disp8 | disp32] */
    if (p[i] != 0xff)
        return 0;
    uint8_t m = p[i + 1];
    if (((m >> 3) & 7) != 4 || (m & 7) != reg)
        return 0;
    if ((m >> 6) == 1) {
        *disp = p[i + 2];
        return 1;
    }
    if ((m >> 6) == 2) {
        int32_t d32;
        memcpy(&d32, p + i + 2, 4);
        if (d32 < 0)
            return 0;
        *disp = (uint32_t)d32;
        return 1;
    }
    return 0;
}

static void *g_hsa; /* dlopen RTLD_NOLOAD of the runtime, for dlsym */
static pid_t g_pid; /* the process that opened it */

static void *stub(const char *name)
{
    void *p = dlvsym(g_hsa, name, "ROCR_1");
    return p ? p : dlsym(g_hsa, name);
}

static const struct rpg_api_layout *layout_of(int t, uint32_t major)
{
    for (size_t i = 0; i < tlayouts[t].n; i++)
        if (tlayouts[t].l[i].major == major)
            return &tlayouts[t].l[i];
    return NULL;
}

static int slot_of(const struct rpg_api_layout *l, uint32_t n, uint32_t id)
{
    for (uint32_t s = 0; s < n; s++)
        if (l->ids[s] == id)
            return (int)s;
    return -1;
}

/* The table stubs of names[] reach, verified; 1, or 0 with why (and -1
 * with why when the runtime is not initialised: the variable is NULL). */
static int table_from_stubs(int t, const char *const *names, size_t n, char *why, size_t whylen)
{
    char *base = NULL;
    for (size_t k = 0; k < n; k++) {
        const uint8_t *p = stub(names[k]);
        if (!p) {
            snprintf(why, whylen, "libhsa-runtime64 exports no %s", names[k]);
            return 0;
        }
        uintptr_t var;
        uint32_t disp;
        if (!IN_TEXT(p) || !decode_stub(p, &var, &disp)) {
            snprintf(why, whylen, "%s is not the table stub this build knows", names[k]);
            return 0;
        }
        if (!IN_DATA(var, sizeof(void *))) {
            snprintf(why, whylen, "%s reads its table pointer outside the runtime's data", names[k]);
            return 0;
        }
        char *tab;
        memcpy(&tab, (const void *)var, sizeof tab);
        if (!tab) {
            snprintf(why, whylen, "its %s table is not set up yet (the app has not initialised HSA)",
                     tname[t]);
            return -1;
        }
        if (!IN_DATA(tab, VER)) {
            snprintf(why, whylen, "%s's table lies outside the runtime's data", names[k]);
            return 0;
        }
        if (base && tab != base) {
            snprintf(why, whylen, "%s and %s name different %s tables", names[0], names[k], tname[t]);
            return 0;
        }
        base = tab;
        uint32_t major, size;
        memcpy(&major, tab, 4);
        memcpy(&size, tab + 4, 4);
        const struct rpg_api_layout *l = layout_of(t, major);
        if (!l) {
            snprintf(why, whylen, "its %s table has major version %u, which this build does not know",
                     tname[t], major);
            return 0;
        }
        if (size < VER + 8 || size > VER + 8 * 4096 || !IN_DATA(tab, size)) {
            snprintf(why, whylen, "its %s table's size (%u) is not one of a table", tname[t], size);
            return 0;
        }
        uint32_t have = (size - VER) / 8, nslots = have < l->count ? have : l->count;
        int id = -1;
        for (uint32_t f = 0; f < tcount[t]; f++)
            if (tnames[t][f] && !strcmp(tnames[t][f], names[k]))
                id = (int)f;
        int s = id < 0 ? -1 : slot_of(l, nslots, (uint32_t)id);
        if (s < 0 || disp != VER + 8u * (uint32_t)s) {
            snprintf(why, whylen, "%s jumps through byte %u of the %s table, not its slot", names[k], disp,
                     tname[t]);
            return 0;
        }
        table *tb = &g_tab[t];
        tb->base = tab;
        tb->layout = l;
        tb->nslots = nslots;
    }
    return 1;
}

static uint64_t fnv(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

/* Fills the slot map and originals of a table whose base is set. */
static void table_load(int t)
{
    table *tb = &g_tab[t];
    memset(tb->slot, 0xff, sizeof tb->slot);
    memset(tb->original, 0, sizeof tb->original);
    void **slots = (void **)(tb->base + VER);
    for (uint32_t s = 0; s < tb->nslots; s++) {
        uint32_t id = tb->layout->ids[s];
        tb->slot[id] = (int16_t)s;
        tb->original[id] = __atomic_load_n(&slots[s], __ATOMIC_ACQUIRE);
    }
    tb->found_hash = fnv(slots, tb->nslots * sizeof(void *));
}

static int table_open(int t, char *tab, char *why, size_t whylen)
{
    if (!tab)
        return 0;
    uint32_t major, size;
    memcpy(&major, tab, 4);
    memcpy(&size, tab + 4, 4);
    const struct rpg_api_layout *l = layout_of(t, major);
    if (!l || size < VER + 8 || size > VER + 8 * 4096) {
        snprintf(why, whylen, "its %s table (version %u, %u bytes) is not one this build knows", tname[t],
                 major, size);
        return 0;
    }
    uint32_t have = (size - VER) / 8;
    g_tab[t].base = tab;
    g_tab[t].layout = l;
    g_tab[t].nslots = have < l->count ? have : l->count;
    return 1;
}

/* The root whose core_ and amd_ext_ are the stubs' tables: exactly one. */
static char *find_root(char *why, size_t whylen)
{
    static const uint32_t majors[] = RPG_HSA_ROOT_MAJORS;
    char *found = NULL;
    int n = 0;
    uintptr_t core = (uintptr_t)g_tab[T_CORE].base, amd = (uintptr_t)g_tab[T_AMD].base;
    for (int i = 0; i < g_mod.nw; i++) {
        for (uintptr_t p = (g_mod.w[i].lo + 7) & ~(uintptr_t)7; p + VER + 4 * 8 <= g_mod.w[i].hi; p += 8) {
            const uintptr_t *w = (const uintptr_t *)p;
            if (w[2] != core || w[3] != amd)
                continue;
            uint32_t major = (uint32_t)w[0], size = (uint32_t)(w[0] >> 32);
            int known = 0;
            for (size_t m = 0; m < sizeof majors / sizeof majors[0]; m++)
                known |= majors[m] == major;
            if (!known || size < VER + 4 * 8 || size > 4096 || !IN_DATA(p, size))
                continue;
            found = (char *)p;
            n++;
        }
    }
    if (n != 1) {
        snprintf(why, whylen, "%d root tables name its core and AMD tables, not one", n);
        return NULL;
    }
    return found;
}

/* Every non-null slot of a found table in the runtime's code. */
static int slots_in_text(int t, char *why, size_t whylen)
{
    table *tb = &g_tab[t];
    void **slots = (void **)(tb->base + VER);
    for (uint32_t s = 0; s < tb->nslots; s++) {
        void *f = __atomic_load_n(&slots[s], __ATOMIC_ACQUIRE);
        if (f && !IN_TEXT(f)) {
            snprintf(why, whylen,
                     "slot %u (%s) of its %s table points outside libhsa-runtime64 (another tool "
                     "replaced it?)",
                     s, tnames[t][tb->layout->ids[s]] ? tnames[t][tb->layout->ids[s]] : "?", tname[t]);
            return 0;
        }
    }
    return 1;
}

/* Finds and verifies every table; 0, -ENOENT (no runtime loaded), -EAGAIN
 * (not initialised) or -ENOEXEC with why. */
static int tables_find(char *why, size_t whylen)
{
    memset(g_tab, 0, sizeof g_tab);
    memset(&g_mod, 0, sizeof g_mod);
    g_root = g_tools = NULL;
    g_tools_n = 0;
    g_hsa = dlopen("libhsa-runtime64.so.1", RTLD_NOW | RTLD_NOLOAD);
    g_pid = getpid();
    if (!g_hsa) {
        snprintf(why, whylen, "the process has not loaded libhsa-runtime64.so.1");
        return -ENOENT;
    }
    void *probe = stub("hsa_system_get_info");
    if (!probe) {
        snprintf(why, whylen, "libhsa-runtime64 exports no hsa_system_get_info");
        return -ENOEXEC;
    }
    g_mod.probe = (uintptr_t)probe;
    dl_iterate_phdr(mod_cb, NULL);
    if (!g_mod.found || !g_mod.nw || !g_mod.nx) {
        snprintf(why, whylen, "libhsa-runtime64's segments were not found");
        return -ENOEXEC;
    }
    static const char *const core_stubs[] = {"hsa_system_get_info", "hsa_memory_allocate",
                                             "hsa_signal_wait_scacquire", "hsa_executable_freeze"};
    static const char *const amd_stubs[] = {"hsa_amd_memory_pool_allocate", "hsa_amd_memory_pool_free",
                                            "hsa_amd_agent_iterate_memory_pools"};
    int r = table_from_stubs(T_CORE, core_stubs, sizeof core_stubs / sizeof core_stubs[0], why, whylen);
    if (r > 0)
        r = table_from_stubs(T_AMD, amd_stubs, sizeof amd_stubs / sizeof amd_stubs[0], why, whylen);
    if (r <= 0)
        return r < 0 ? -EAGAIN : -ENOEXEC;
    g_root = find_root(why, whylen);
    if (!g_root)
        return -ENOEXEC;
    char *fin, *img, *tools = NULL;
    memcpy(&fin, g_root + VER + 2 * 8, 8);
    memcpy(&img, g_root + VER + 3 * 8, 8);
    uint32_t rmajor, rsize;
    memcpy(&rmajor, g_root, 4);
    memcpy(&rsize, g_root + 4, 4);
    for (size_t i = 0; i < sizeof RPG_HSA_ROOT_LAYOUTS / sizeof RPG_HSA_ROOT_LAYOUTS[0]; i++)
        if (RPG_HSA_ROOT_LAYOUTS[i].major == rmajor && RPG_HSA_ROOT_LAYOUTS[i].tools_offset &&
            rsize >= RPG_HSA_ROOT_LAYOUTS[i].tools_offset + 8)
            memcpy(&tools, g_root + RPG_HSA_ROOT_LAYOUTS[i].tools_offset, 8);
    /* The image and finalizer tables are the root's (ROCR allocates them
     * when it loads those extensions): the verified root's pointers are
     * what OnLoad would hand a tool. */
    char ignored[160] = "";
    (void)table_open(T_IMAGE, img, ignored, sizeof ignored);
    (void)table_open(T_FIN, fin, ignored, sizeof ignored);
    if (tools && IN_DATA(tools, VER)) {
        uint32_t major, size;
        memcpy(&major, tools, 4);
        memcpy(&size, tools + 4, 4);
        for (size_t i = 0; i < sizeof RPG_HSA_TOOLS_EVENTS_LAYOUTS / sizeof RPG_HSA_TOOLS_EVENTS_LAYOUTS[0]; i++)
            if (RPG_HSA_TOOLS_EVENTS_LAYOUTS[i].major == major && size >= VER + 8 && IN_DATA(tools, size)) {
                uint32_t have = (size - VER) / 8, cnt = RPG_HSA_TOOLS_EVENTS_LAYOUTS[i].count;
                g_tools = tools;
                g_tools_n = have < cnt ? have : cnt;
                g_tools_hash = fnv(tools + VER, g_tools_n * sizeof(void *));
            }
    }
    for (int t = 0; t < NT; t++)
        if (g_tab[t].base)
            table_load(t);
    return 0;
}

/* Set on the control thread: its calls (attach_hsa.c's polls, the other
 * attach modules') are the profiler's, not the app's. */
static __thread __attribute__((tls_model("initial-exec"))) int t_quiet;

/* ---- the wrappers ----------------------------------------------------------------------- */

#define P10 uint64_t a0, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6, \
            uint64_t a7, uint64_t a8, uint64_t a9
#define A10 a0, a1, a2, a3, a4, a5, a6, a7, a8, a9

static inline __attribute__((always_inline)) uint64_t traced(int t, uint32_t id, P10)
{
    rpg_attach_enter();
    fn10 real = g_real[t][id];
    uint64_t r;
    if (!(rpg_domains & tbit[t]) || t_quiet) {
        r = real(A10);
    } else {
        rpg_api_span s;
        rpg__api_begin_fast(&s);
        r = real(A10);
        rpg__api_end_fast(&s, RPG_KIND_HSA_API, tdomain[t], id);
    }
    rpg_attach_leave();
    return r;
}

#define WRAP(t, id) \
    static uint64_t w_##t##_##id(P10) { return traced(t, id, A10); }
#define W_CORE(id, name, n) WRAP(0, id)
#define W_AMD(id, name, n) WRAP(1, id)
#define W_IMG(id, name, n) WRAP(2, id)
#define W_FIN(id, name, n) WRAP(3, id)
RPG_HSA_CORE_FUNCS(W_CORE)
RPG_HSA_AMD_EXT_FUNCS(W_AMD)
RPG_HSA_IMAGE_EXT_FUNCS(W_IMG)
RPG_HSA_FINALIZER_EXT_FUNCS(W_FIN)
#undef W_CORE
#undef W_AMD
#undef W_IMG
#undef W_FIN

#define PTR_CORE(id, name, n) [id] = (void *)w_0_##id,
#define PTR_AMD(id, name, n) [id] = (void *)w_1_##id,
#define PTR_IMG(id, name, n) [id] = (void *)w_2_##id,
#define PTR_FIN(id, name, n) [id] = (void *)w_3_##id,
static void *const core_wrappers[] = {RPG_HSA_CORE_FUNCS(PTR_CORE)};
static void *const amd_wrappers[] = {RPG_HSA_AMD_EXT_FUNCS(PTR_AMD)};
static void *const image_wrappers[] = {RPG_HSA_IMAGE_EXT_FUNCS(PTR_IMG)};
static void *const fin_wrappers[] = {RPG_HSA_FINALIZER_EXT_FUNCS(PTR_FIN)};
#undef PTR_CORE
#undef PTR_AMD
#undef PTR_IMG
#undef PTR_FIN
static void *const *const twrappers[NT] = {core_wrappers, amd_wrappers, image_wrappers, fin_wrappers};

#define MAXARGS_CHECK(id, name, n) _Static_assert((n) <= NARGS_MAX, #name " takes more arguments than the wrappers forward");
RPG_HSA_CORE_FUNCS(MAXARGS_CHECK)
RPG_HSA_AMD_EXT_FUNCS(MAXARGS_CHECK)
RPG_HSA_IMAGE_EXT_FUNCS(MAXARGS_CHECK)
RPG_HSA_FINALIZER_EXT_FUNCS(MAXARGS_CHECK)
#undef MAXARGS_CHECK

/* ---- memory allocations (activity.cpp's records) --------------------------------------------- */

typedef struct pool_node {
    uint64_t handle;
    uint32_t node;
} pool_node;
#define MAXPOOLS 512
static pool_node g_pools[MAXPOOLS];
static int g_npools;

static uint32_t pool_node_of(uint64_t handle)
{
    for (int i = 0; i < g_npools; i++)
        if (g_pools[i].handle == handle)
            return g_pools[i].node;
    return UINT32_MAX;
}

static int add_pool(uint64_t p, void *data)
{
    if (g_npools < MAXPOOLS)
        g_pools[g_npools++] = (pool_node){p, *(uint32_t *)data};
    return 0;
}

static int add_agent(uint64_t a, void *data)
{
    (void)data;
    typedef int (*get_info_fn)(uint64_t, int, void *);
    typedef int (*iter_fn)(uint64_t, int (*)(uint64_t, void *), void *);
    get_info_fn get_info = (get_info_fn)g_tab[T_CORE].original[CORE_hsa_agent_get_info];
    iter_fn pools = (iter_fn)g_tab[T_AMD].original[AMD_hsa_amd_agent_iterate_memory_pools];
    iter_fn regions = (iter_fn)g_tab[T_CORE].original[CORE_hsa_agent_iterate_regions];
    uint32_t node = 0;
    if (get_info)
        get_info(a, 0xA004 /* HSA_AMD_AGENT_INFO_DRIVER_NODE_ID */, &node);
    if (pools)
        pools(a, add_pool, &node);
    if (regions)
        regions(a, add_pool, &node);
    return 0;
}

static void pools_discover(void)
{
    typedef int (*iter_agents_fn)(int (*)(uint64_t, void *), void *);
    iter_agents_fn it = (iter_agents_fn)g_tab[T_CORE].original[CORE_hsa_iterate_agents];
    g_npools = 0;
    if (it)
        it(add_agent, NULL);
}

static uint64_t correlation(void)
{
    uint64_t c = rpg_correlation_current();
    return c ? c : rpg_correlation_next();
}

static void record_alloc(uint32_t op, uint32_t node, uint64_t address, uint64_t size, uint64_t corr,
                         uint64_t t0)
{
    rpg_memory_allocation_rec r;
    memset(&r, 0, sizeof r);
    r.operation = op;
    r.agent_node = node;
    r.address = address;
    r.size = size;
    r.correlation_id = corr;
    r.start_ns = t0;
    r.end_ns = rpg_now();
    rpg_record_memory_allocation(&r);
}

typedef int (*pool_alloc_fn)(uint64_t, size_t, uint32_t, void **);
typedef int (*free_fn)(void *);
typedef int (*vmem_create_fn)(uint64_t, size_t, uint32_t, uint64_t, uint64_t *);
typedef int (*vmem_release_fn)(uint64_t);
typedef int (*mem_alloc_fn)(uint64_t, size_t, void **);

#define ON_ALLOC ((rpg_domains & RPG_DOMAIN_MEMORY_ALLOCATION) && !t_quiet)

static int hook_pool_allocate(uint64_t pool, size_t size, uint32_t flags, void **ptr)
{
    rpg_attach_enter();
    pool_alloc_fn next = (pool_alloc_fn)g_tab[T_AMD].original[AMD_hsa_amd_memory_pool_allocate];
    int st;
    if (!ON_ALLOC) {
        st = next(pool, size, flags, ptr);
    } else {
        uint64_t corr = correlation(), t0 = rpg_now();
        st = next(pool, size, flags, ptr);
        if (st == 0 && ptr)
            record_alloc(RPG_ALLOC_ALLOCATE, pool_node_of(pool), (uint64_t)(uintptr_t)*ptr, size, corr, t0);
    }
    rpg_attach_leave();
    return st;
}

static int free_common(int t, uint32_t id, void *ptr)
{
    rpg_attach_enter();
    free_fn next = (free_fn)g_tab[t].original[id];
    int st;
    if (!ON_ALLOC) {
        st = next(ptr);
    } else {
        uint64_t corr = correlation(), t0 = rpg_now();
        st = next(ptr);
        if (st == 0)
            record_alloc(RPG_ALLOC_FREE, 0, (uint64_t)(uintptr_t)ptr, 0, corr, t0);
    }
    rpg_attach_leave();
    return st;
}

static int hook_pool_free(void *ptr)
{
    return free_common(T_AMD, AMD_hsa_amd_memory_pool_free, ptr);
}

static int hook_free(void *ptr)
{
    return free_common(T_CORE, CORE_hsa_memory_free, ptr);
}

static int hook_allocate(uint64_t region, size_t size, void **ptr)
{
    rpg_attach_enter();
    mem_alloc_fn next = (mem_alloc_fn)g_tab[T_CORE].original[CORE_hsa_memory_allocate];
    int st;
    if (!ON_ALLOC) {
        st = next(region, size, ptr);
    } else {
        uint64_t corr = correlation(), t0 = rpg_now();
        st = next(region, size, ptr);
        if (st == 0 && ptr)
            record_alloc(RPG_ALLOC_ALLOCATE, pool_node_of(region), (uint64_t)(uintptr_t)*ptr, size, corr, t0);
    }
    rpg_attach_leave();
    return st;
}

/* As rocprofv3 (and activity.cpp): VMEM_ALLOCATE carries the handle as its
 * address, the size and the pool's agent; VMEM_FREE the handle, size 0. */
static int hook_vmem_create(uint64_t pool, size_t size, uint32_t type, uint64_t flags, uint64_t *handle)
{
    rpg_attach_enter();
    vmem_create_fn next = (vmem_create_fn)g_tab[T_AMD].original[AMD_hsa_amd_vmem_handle_create];
    int st;
    if (!ON_ALLOC) {
        st = next(pool, size, type, flags, handle);
    } else {
        uint64_t corr = correlation(), t0 = rpg_now();
        st = next(pool, size, type, flags, handle);
        if (st == 0 && handle)
            record_alloc(RPG_ALLOC_VMEM_ALLOCATE, pool_node_of(pool), *handle, size, corr, t0);
    }
    rpg_attach_leave();
    return st;
}

static int hook_vmem_release(uint64_t handle)
{
    rpg_attach_enter();
    vmem_release_fn next = (vmem_release_fn)g_tab[T_AMD].original[AMD_hsa_amd_vmem_handle_release];
    int st;
    if (!ON_ALLOC) {
        st = next(handle);
    } else {
        uint64_t corr = correlation(), t0 = rpg_now();
        st = next(handle);
        if (st == 0)
            record_alloc(RPG_ALLOC_VMEM_FREE, 0, handle, 0, corr, t0);
    }
    rpg_attach_leave();
    return st;
}

static const struct {
    int t;
    uint32_t id;
    void *hook;
} alloc_hooks[] = {
    {T_AMD, AMD_hsa_amd_memory_pool_allocate, (void *)hook_pool_allocate},
    {T_AMD, AMD_hsa_amd_memory_pool_free, (void *)hook_pool_free},
    {T_AMD, AMD_hsa_amd_vmem_handle_create, (void *)hook_vmem_create},
    {T_AMD, AMD_hsa_amd_vmem_handle_release, (void *)hook_vmem_release},
    {T_CORE, CORE_hsa_memory_allocate, (void *)hook_allocate},
    {T_CORE, CORE_hsa_memory_free, (void *)hook_free},
};
#define NALLOC (sizeof alloc_hooks / sizeof alloc_hooks[0])

/* ---- scratch memory (scratch.cpp's records) ------------------------------------------------- */

typedef int (*tool_event_fn)(const uint8_t *);
static tool_event_fn g_prev_tool[RPG_HSA_TOOLS_EVENTS_COUNT];

static __thread __attribute__((tls_model("initial-exec"))) struct {
    uint64_t start;
    int on;
} t_scratch[4];

static void scratch_start(uint32_t op)
{
    t_scratch[op].start = rpg_now();
    t_scratch[op].on = 1;
}

static void scratch_end(uint32_t op, const uint8_t *ev, uint64_t size)
{
    uint64_t t1 = rpg_now();
    int on = t_scratch[op].on;
    uint64_t t0 = t_scratch[op].start;
    t_scratch[op].on = 0;
    rpg_scratch_memory_rec r;
    memset(&r, 0, sizeof r);
    r.operation = op;
    memcpy(&r.flags, ev + RPG_HSA_TOOL_EVENT_FLAGS_OFFSET, sizeof r.flags);
    const void *q;
    memcpy(&q, ev + RPG_HSA_TOOL_EVENT_QUEUE_OFFSET, sizeof q);
    uint64_t queue_id = 0;
    uint32_t node = 0;
    if (q)
        (void)rpg__attach_queue_identify(q, &queue_id, &node);
    r.agent_node = node;
    r.queue_id = queue_id;
    r.size = size;
    r.correlation_id = rpg_correlation_next();
    r.start_ns = on ? t0 : t1; /* an end without its start: a point in time */
    r.end_ns = t1;
    rpg_record_scratch_memory(&r);
}

static int tool_event(uint32_t id, const uint8_t *ev)
{
    rpg_attach_enter();
    if (ev && (rpg_domains & RPG_DOMAIN_SCRATCH_MEMORY)) {
        uint64_t size;
        switch (id) {
        case TOOL_hsa_amd_tool_scratch_event_alloc_start:
            scratch_start(RPG_SCRATCH_ALLOC);
            break;
        case TOOL_hsa_amd_tool_scratch_event_alloc_end:
            memcpy(&size, ev + RPG_HSA_TOOL_EVENT_SIZE_OFFSET, sizeof size);
            scratch_end(RPG_SCRATCH_ALLOC, ev, size);
            break;
        case TOOL_hsa_amd_tool_scratch_event_free_start:
            scratch_start(RPG_SCRATCH_FREE);
            break;
        case TOOL_hsa_amd_tool_scratch_event_free_end:
            scratch_end(RPG_SCRATCH_FREE, ev, 0);
            break;
        case TOOL_hsa_amd_tool_scratch_event_async_reclaim_start:
            scratch_start(RPG_SCRATCH_ASYNC_RECLAIM);
            break;
        case TOOL_hsa_amd_tool_scratch_event_async_reclaim_end:
            scratch_end(RPG_SCRATCH_ASYNC_RECLAIM, ev, 0);
            break;
        }
    }
    tool_event_fn prev = g_prev_tool[id];
    int r = prev ? prev(ev) : 0;
    rpg_attach_leave();
    return r;
}

#define TOOL_WRAP(id, name) \
    static int tool_##id(const uint8_t *ev) { return tool_event(id, ev); }
RPG_HSA_TOOLS_EVENTS(TOOL_WRAP)
#undef TOOL_WRAP
#define TOOL_PTR(id, name) [id] = (void *)tool_##id,
static void *const tool_wrappers[] = {RPG_HSA_TOOLS_EVENTS(TOOL_PTR)};
#undef TOOL_PTR

/* ---- install and restore ---------------------------------------------------------------- */

static void put(void **slot, void *mine)
{
    if (g_nsaved >= MAXSAVED)
        return;
    void *old = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    g_saved[g_nsaved++] = (saved){slot, old, mine};
    __atomic_store_n(slot, mine, __ATOMIC_RELEASE);
}

static void **slot_addr(int t, uint32_t id)
{
    table *tb = &g_tab[t];
    if (!tb->base || id >= MAXF || tb->slot[id] < 0)
        return NULL;
    return (void **)(tb->base + VER) + tb->slot[id];
}

static void note(uint32_t domain, const char *why)
{
    if (rpg_domains & domain)
        rpg_record_string(RPG_STRTAB_STATUS, RPG_STATUS_UNAVAILABLE | (uint64_t)__builtin_ctz(domain), why,
                          strlen(why));
}

static int g_started;

void *rpg__table_original(const char *name)
{
    if (!g_started)
        return NULL;
    for (int t = 0; t < NT; t++) {
        if (!g_tab[t].base)
            continue;
        for (uint32_t id = 0; id < tcount[t]; id++)
            if (tnames[t][id] && !strcmp(tnames[t][id], name))
                return g_tab[t].original[id];
    }
    return NULL;
}

#define HSA_BITS (RPG_DOMAIN_HSA_CORE | RPG_DOMAIN_HSA_AMD_EXT | RPG_DOMAIN_HSA_IMAGE_EXT | RPG_DOMAIN_HSA_FINALIZER_EXT)
#define TABLE_BITS (HSA_BITS | RPG_DOMAIN_MEMORY_ALLOCATION | RPG_DOMAIN_SCRATCH_MEMORY)

int rpg__table_start(char *err, size_t errlen)
{
    uint32_t want = rpg_domains & TABLE_BITS;
    g_nsaved = 0;
    g_started = 0;
    if (!want)
        return 0;
    t_quiet = 1; /* called on the control thread */
    char why[160] = "";
    int rc = tables_find(why, sizeof why);
    /* What was asked, in words (option names are the domain table's). */
    const char *opt = (want & HSA_BITS)                        ? "--hsa-trace"
                      : (want & RPG_DOMAIN_MEMORY_ALLOCATION) ? "HSA memory allocation tracing"
                                                               : "scratch memory tracing";
    if (rc == -ENOENT) {
        /* No HSA runtime here (a launcher's shell): nothing to trace. */
        note(want, "the process has not loaded the HSA runtime");
        return 0;
    }
    if (rc == 0) {
        static const int must[] = {T_CORE, T_AMD, T_IMAGE, T_FIN};
        for (size_t i = 0; i < sizeof must / sizeof must[0] && rc == 0; i++) {
            int t = must[i];
            int needed = (want & tbit[t]) ||
                         ((want & RPG_DOMAIN_MEMORY_ALLOCATION) && (t == T_CORE || t == T_AMD));
            if (needed && g_tab[t].base && !slots_in_text(t, why, sizeof why))
                rc = -ENOEXEC;
        }
    }
    if (rc != 0) {
        snprintf(err, errlen, "%s while attached: this runtime's HSA API table was not found (%s)", opt, why);
        if (g_hsa)
            dlclose(g_hsa);
        g_hsa = NULL;
        return rc == -EAGAIN ? -EAGAIN : -ENOEXEC;
    }
    g_started = 1;
    if (want & RPG_DOMAIN_MEMORY_ALLOCATION)
        pools_discover();
    for (int t = 0; t < NT; t++) {
        if (!(want & tbit[t]))
            continue;
        if (!g_tab[t].base)
            continue; /* as launch mode: an extension table the runtime lacks is just untraced */
        for (uint32_t id = 0; id < tcount[t]; id++)
            if (tnames[t][id])
                rpg_record_string(tdomain[t], id, tnames[t][id], strlen(tnames[t][id]));
    }
    /* What each wrapper calls first, then the slots. */
    for (int t = 0; t < NT; t++)
        for (uint32_t id = 0; id < MAXF; id++)
            g_real[t][id] = (fn10)g_tab[t].original[id];
    int alloc_slot[NT][MAXF];
    memset(alloc_slot, 0, sizeof alloc_slot);
    if (want & RPG_DOMAIN_MEMORY_ALLOCATION)
        for (size_t i = 0; i < NALLOC; i++)
            if (g_tab[alloc_hooks[i].t].original[alloc_hooks[i].id]) {
                g_real[alloc_hooks[i].t][alloc_hooks[i].id] = (fn10)alloc_hooks[i].hook;
                alloc_slot[alloc_hooks[i].t][alloc_hooks[i].id] = 1;
            }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    uint64_t wrapped[NT] = {0};
    for (int t = 0; t < NT; t++) {
        for (uint32_t id = 0; id < tcount[t]; id++) {
            void **slot = slot_addr(t, id);
            if (!slot || !g_tab[t].original[id])
                continue;
            if ((want & tbit[t]) && tnargs[t][id] >= 0) {
                put(slot, twrappers[t][id]);
                wrapped[t]++;
            } else if (alloc_slot[t][id]) {
                put(slot, (void *)g_real[t][id]);
            }
        }
    }
    if (want & RPG_DOMAIN_SCRATCH_MEMORY) {
        if (!g_tools) {
            note(RPG_DOMAIN_SCRATCH_MEMORY, "this HSA runtime has no tools table, through which ROCR 6.1 and "
                                            "later report scratch memory events");
        } else {
            void **slots = (void **)(g_tools + VER);
            for (uint32_t s = 0; s < g_tools_n; s++) {
                uint32_t id = RPG_HSA_TOOLS_EVENTS_LAYOUTS[0].ids[s];
                if (id >= RPG_HSA_TOOLS_EVENTS_COUNT)
                    continue;
                g_prev_tool[id] = (tool_event_fn)__atomic_load_n(&slots[s], __ATOMIC_ACQUIRE);
                put(&slots[s], tool_wrappers[id]);
            }
        }
    }
    const char *dbg = rpg_env(RPG_ENV_GO_SHIM_DEBUG);
    if (dbg && dbg[0] && dbg[0] != '0') {
        for (int t = 0; t < NT; t++) {
            table *tb = &g_tab[t];
            if (!tb->base)
                continue;
            uint32_t major;
            memcpy(&major, tb->base, 4);
            /* The hash of the slots as found: a test compares it with the
             * process's memory after the detach. */
            fprintf(stderr,
                    "rocprof-go attach: HSA table %d at 0x%llx major %u slots %u wrapped %llu fnv 0x%016llx\n",
                    t, (unsigned long long)(uintptr_t)(tb->base + VER), major, tb->nslots,
                    (unsigned long long)wrapped[t], (unsigned long long)tb->found_hash);
        }
        if (g_tools)
            fprintf(stderr, "rocprof-go attach: HSA table tools at 0x%llx slots %u fnv 0x%016llx\n",
                    (unsigned long long)(uintptr_t)(g_tools + VER), g_tools_n,
                    (unsigned long long)g_tools_hash);
    }
    return 0;
}

int rpg__table_restore(void)
{
    int n = 0;
    for (int i = g_nsaved - 1; i >= 0; i--) {
        void *mine = g_saved[i].mine;
        if (__atomic_compare_exchange_n(g_saved[i].slot, &mine, g_saved[i].old, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE))
            n++;
    }
    g_nsaved = 0;
    g_started = 0;
    /* The RTLD_NOLOAD reference only; a fork child (restoring its copy of
     * the slots in its atfork handler) keeps it: the loader's lock may have
     * been held by another thread of the parent at the fork. */
    if (g_hsa && getpid() == g_pid)
        dlclose(g_hsa);
    g_hsa = NULL;
    return n;
}
