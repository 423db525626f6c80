/*
 * attach_got.c: redirects the GOT slots of every loaded module to the
 * library's wrappers while attached, and puts back exactly what it found.
 *
 * A module calls an imported function through its GOT: a JUMP_SLOT (the
 * PLT's slot, bound at load with -z now, or lazily on the first call) or a
 * GLOB_DAT (-fno-plt calls and taken addresses). Each such relocation of
 * every module (but this library, the vdso and the module defining the
 * symbol) whose symbol is hooked is saved (module, slot, old value) and
 * overwritten with the wrapper in one aligned 8-byte store, so a thread
 * calling through it meanwhile takes either the old target or the wrapper.
 * RELRO makes most GOT pages read-only after relocation: the page is made
 * writable for the store and given its old protection back (taken from
 * /proc/self/maps).
 *
 * Restoring writes back the saved value (a lazy PLT stub stays a stub, to
 * be bound by the loader as it would have been) where the slot still holds
 * the wrapper, in modules still loaded at the same base under the same
 * name; each module is pinned (dlopen RTLD_NOLOAD) while its slots are
 * written, so a concurrent dlclose cannot unmap them under the store.
 *
 * The modules are listed under dl_iterate_phdr, which holds the loader's
 * write lock, and patched outside it: dlopen takes the loader's main lock
 * before that one, so calling it inside would deadlock against an app
 * thread's dlopen.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <unistd.h>

#include "attach_internal.h"

#define NAME_MAX_LEN 512

typedef struct module {
    uintptr_t base;
    const ElfW(Phdr) *phdr;
    int phnum;
    char name[NAME_MAX_LEN];
} module;

typedef struct saved_slot {
    uintptr_t slot;
    uintptr_t old;
    uintptr_t now;
    uint32_t module; /* index into g_mods */
} saved_slot;

/* Arrays grown with mmap/mremap: the app's heap is left alone, and
 * everything is given back exactly at the restore. */
typedef struct vec {
    void *p;
    size_t n, cap, elem;
} vec;

static int vec_reserve(vec *v, size_t want)
{
    if (want <= v->cap)
        return 0;
    size_t cap = v->cap ? v->cap : 4096 / v->elem;
    while (cap < want)
        cap *= 2;
    void *p = v->p ? mremap(v->p, v->cap * v->elem, cap * v->elem, MREMAP_MAYMOVE)
                   : mmap(NULL, cap * v->elem, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
                          -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    v->p = p;
    v->cap = cap;
    return 0;
}

static void *vec_push(vec *v)
{
    if (vec_reserve(v, v->n + 1) != 0)
        return NULL;
    return (char *)v->p + v->elem * v->n++;
}

static void vec_free(vec *v)
{
    if (v->p)
        munmap(v->p, v->cap * v->elem);
    v->p = NULL;
    v->n = v->cap = 0;
}

static pthread_mutex_t g_got_lock = PTHREAD_MUTEX_INITIALIZER;
static vec g_mods = {NULL, 0, 0, sizeof(module)};       /* modules with saved slots */
static vec g_saved = {NULL, 0, 0, sizeof(saved_slot)};  /* every slot written */

/* ---- the loaded modules ------------------------------------------------- */

typedef struct listing {
    vec *mods;
    uintptr_t self_base;
    uintptr_t vdso;
    unsigned long long adds;
    int failed;
} listing;

static uintptr_t self_base(void)
{
    Dl_info di;
    if (!dladdr((void *)self_base, &di))
        return 0;
    return (uintptr_t)di.dli_fbase;
}

static int list_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    listing *l = data;
    l->adds = info->dlpi_adds;
    const char *name = info->dlpi_name ? info->dlpi_name : "";
    uintptr_t first = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < first)
            first = info->dlpi_phdr[i].p_vaddr;
    uintptr_t start = info->dlpi_addr + (first == UINTPTR_MAX ? 0 : first);
    if (l->vdso && start == l->vdso)
        return 0;
    if (strncmp(name, "linux-vdso", 10) == 0 || strncmp(name, "linux-gate", 10) == 0)
        return 0;
    if (rpg__in_self((const void *)info->dlpi_phdr))
        return 0;
    if (strlen(name) >= NAME_MAX_LEN)
        return 0;
    module *m = vec_push(l->mods);
    if (!m) {
        l->failed = 1;
        return 1;
    }
    m->base = info->dlpi_addr;
    m->phdr = info->dlpi_phdr;
    m->phnum = info->dlpi_phnum;
    strcpy(m->name, name);
    return 0;
}

static int list_modules(vec *mods, unsigned long long *adds)
{
    listing l = {mods, self_base(), (uintptr_t)getauxval(AT_SYSINFO_EHDR), 0, 0};
    dl_iterate_phdr(list_cb, &l);
    if (adds)
        *adds = l.adds;
    return l.failed ? -ENOMEM : 0;
}

static int adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

unsigned long long rpg__got_adds(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(adds_cb, &adds);
    return adds;
}

/* A handle on the module that keeps it loaded while we write its slots
 * (NULL: it is gone, or another module is at its base now). The main
 * program's is dlopen(NULL). */
static void *pin(const module *m)
{
    if (!m->name[0])
        return dlopen(NULL, RTLD_LAZY);
    void *h = dlopen(m->name, RTLD_LAZY | RTLD_NOLOAD);
    if (!h)
        return NULL;
    struct link_map *lm = NULL;
    if (dlinfo(h, RTLD_DI_LINKMAP, &lm) != 0 || !lm || (uintptr_t)lm->l_addr != m->base) {
        dlclose(h);
        return NULL;
    }
    return h;
}

/* ---- page protections --------------------------------------------------- */

typedef struct region {
    uintptr_t start, end;
    int prot;
} region;

static uintptr_t parse_hex(const char **s)
{
    uintptr_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        if (c >= '0' && c <= '9')
            v = v * 16 + (uintptr_t)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v = v * 16 + (uintptr_t)(c - 'a' + 10);
        else
            return v;
    }
}

/* /proc/self/maps as (start, end, prot), sorted as the kernel lists them. */
static int read_regions(vec *out)
{
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    char buf[8192];
    size_t have = 0;
    int rc = 0;
    for (;;) {
        ssize_t r = read(fd, buf + have, sizeof buf - have);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            rc = -errno;
            break;
        }
        have += (size_t)r;
        size_t used = 0;
        for (;;) {
            char *nl = memchr(buf + used, '\n', have - used);
            if (!nl)
                break;
            const char *s = buf + used;
            region g;
            g.start = parse_hex(&s);
            if (*s == '-')
                s++;
            g.end = parse_hex(&s);
            if (*s == ' ')
                s++;
            g.prot = (s[0] == 'r' ? PROT_READ : 0) | (s[1] == 'w' ? PROT_WRITE : 0) |
                     (s[2] == 'x' ? PROT_EXEC : 0);
            region *d = vec_push(out);
            if (!d) {
                rc = -ENOMEM;
                break;
            }
            *d = g;
            used = (size_t)(nl - buf) + 1;
        }
        if (rc != 0 || r == 0)
            break;
        memmove(buf, buf + used, have - used);
        have -= used;
        if (have == sizeof buf) { /* a line longer than the buffer: drop it */
            have = 0;
        }
    }
    close(fd);
    return rc;
}

static int prot_of(const vec *regions, uintptr_t a)
{
    const region *g = regions->p;
    size_t lo = 0, hi = regions->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a < g[mid].start)
            hi = mid;
        else if (a >= g[mid].end)
            lo = mid + 1;
        else
            return g[mid].prot;
    }
    return -1;
}

/* One aligned 8-byte store, the page made writable around it if it was not. */
static int store_slot(const vec *regions, uintptr_t slot, uintptr_t value)
{
    long ps = sysconf(_SC_PAGESIZE);
    uintptr_t page = slot & ~(uintptr_t)(ps - 1);
    int prot = prot_of(regions, slot);
    if (prot < 0)
        return -EFAULT;
    if (!(prot & PROT_WRITE) && mprotect((void *)page, (size_t)ps, prot | PROT_WRITE) != 0)
        return -errno;
    __atomic_store_n((uintptr_t *)slot, value, __ATOMIC_SEQ_CST);
    if (!(prot & PROT_WRITE))
        (void)mprotect((void *)page, (size_t)ps, prot);
    return 0;
}

/* ---- the hooks by name -------------------------------------------------- */

static uint64_t fnv(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

typedef struct hook_table {
    const rpg_hook *hooks;
    uint32_t *slots; /* index + 1, 0: empty */
    size_t mask;
    vec mem;
} hook_table;

static int table_build(hook_table *t, const rpg_hook *hooks, size_t n)
{
    size_t size = 16;
    while (size < 2 * n)
        size *= 2;
    t->hooks = hooks;
    t->mask = size - 1;
    t->mem = (vec){NULL, 0, 0, sizeof(uint32_t)};
    if (vec_reserve(&t->mem, size) != 0)
        return -ENOMEM;
    t->slots = t->mem.p;
    memset(t->slots, 0, size * sizeof(uint32_t));
    for (size_t i = 0; i < n; i++) {
        if (!hooks[i].name || !hooks[i].wrapper || !hooks[i].real)
            continue;
        size_t k = fnv(hooks[i].name) & t->mask;
        while (t->slots[k])
            k = (k + 1) & t->mask;
        t->slots[k] = (uint32_t)i + 1;
    }
    return 0;
}

/* The hook for name as required (version NULL: none required): the one of
 * that version, else one that takes any version. */
static const rpg_hook *table_find(const hook_table *t, const char *name, const char *version)
{
    const rpg_hook *any = NULL;
    for (size_t k = fnv(name) & t->mask; t->slots[k]; k = (k + 1) & t->mask) {
        const rpg_hook *h = &t->hooks[t->slots[k] - 1];
        if (strcmp(h->name, name) != 0)
            continue;
        if (!h->version)
            any = h;
        else if (!version || strcmp(h->version, version) == 0)
            return h;
    }
    return any;
}

/* ---- one module's relocations ------------------------------------------- */

typedef struct dyninfo {
    const ElfW(Sym) *symtab;
    const char *strtab;
    const ElfW(Rela) *rela;
    size_t relasz;
    const ElfW(Rela) *jmprel;
    size_t pltrelsz;
    int pltrel_is_rela;
    const ElfW(Half) *versym;
    const ElfW(Verneed) *verneed;
    size_t verneednum;
} dyninfo;

static uintptr_t dyn_addr(uintptr_t base, uintptr_t v)
{
    /* The loader may or may not have relocated the entry in place (a
     * read-only dynamic section is left as linked). */
    return base && v < base ? v + base : v;
}

static int read_dynamic(const module *m, dyninfo *d)
{
    memset(d, 0, sizeof *d);
    d->pltrel_is_rela = 1;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < m->phnum; i++)
        if (m->phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(m->base + m->phdr[i].p_vaddr);
    if (!dyn)
        return -1;
    for (; dyn->d_tag != DT_NULL; dyn++) {
        uintptr_t v = (uintptr_t)dyn->d_un.d_ptr;
        switch (dyn->d_tag) {
        case DT_SYMTAB: d->symtab = (const ElfW(Sym) *)dyn_addr(m->base, v); break;
        case DT_STRTAB: d->strtab = (const char *)dyn_addr(m->base, v); break;
        case DT_RELA: d->rela = (const ElfW(Rela) *)dyn_addr(m->base, v); break;
        case DT_RELASZ: d->relasz = dyn->d_un.d_val; break;
        case DT_JMPREL: d->jmprel = (const ElfW(Rela) *)dyn_addr(m->base, v); break;
        case DT_PLTRELSZ: d->pltrelsz = dyn->d_un.d_val; break;
        case DT_PLTREL: d->pltrel_is_rela = dyn->d_un.d_val == DT_RELA; break;
        case DT_VERSYM: d->versym = (const ElfW(Half) *)dyn_addr(m->base, v); break;
        case DT_VERNEED: d->verneed = (const ElfW(Verneed) *)dyn_addr(m->base, v); break;
        case DT_VERNEEDNUM: d->verneednum = dyn->d_un.d_val; break;
        default: break;
        }
    }
    return d->symtab && d->strtab ? 0 : -1;
}

/* The version the module requires for symbol i (NULL: none). */
static const char *required_version(const dyninfo *d, size_t i)
{
    if (!d->versym || !d->verneed)
        return NULL;
    ElfW(Half) ndx = d->versym[i] & 0x7fff;
    if (ndx < 2)
        return NULL;
    const ElfW(Verneed) *vn = d->verneed;
    for (size_t k = 0; k < d->verneednum; k++) {
        const ElfW(Vernaux) *va = (const ElfW(Vernaux) *)((const char *)vn + vn->vn_aux);
        for (unsigned j = 0; j < vn->vn_cnt; j++) {
            if (va->vna_other == ndx)
                return d->strtab + va->vna_name;
            va = (const ElfW(Vernaux) *)((const char *)va + va->vna_next);
        }
        if (!vn->vn_next)
            break;
        vn = (const ElfW(Verneed) *)((const char *)vn + vn->vn_next);
    }
    return NULL;
}

static int module_holds(const module *m, uintptr_t a)
{
    for (int i = 0; i < m->phnum; i++) {
        const ElfW(Phdr) *ph = &m->phdr[i];
        if (ph->p_type == PT_LOAD && a >= m->base + ph->p_vaddr &&
            a < m->base + ph->p_vaddr + ph->p_memsz)
            return 1;
    }
    return 0;
}

typedef struct patch_ctx {
    const hook_table *table;
    const vec *regions;
    int written;
    int err;
} patch_ctx;

/* The module's saved-slot entry in g_mods (added once). */
static int module_index(const module *m, uint32_t *out)
{
    module *mods = g_mods.p;
    for (size_t i = 0; i < g_mods.n; i++) {
        if (mods[i].base == m->base && strcmp(mods[i].name, m->name) == 0) {
            *out = (uint32_t)i;
            return 0;
        }
    }
    module *n = vec_push(&g_mods);
    if (!n)
        return -ENOMEM;
    *n = *m;
    *out = (uint32_t)(g_mods.n - 1);
    return 0;
}

static void patch_relocs(patch_ctx *c, const module *m, void *handle, const dyninfo *d,
                         const ElfW(Rela) *r, size_t bytes)
{
    if (!r)
        return;
    for (size_t k = 0; k < bytes / sizeof *r; k++) {
        uint32_t type = (uint32_t)ELF64_R_TYPE(r[k].r_info);
        if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
            continue;
        size_t si = ELF64_R_SYM(r[k].r_info);
        const ElfW(Sym) *sym = &d->symtab[si];
        if (si == 0 || sym->st_shndx != SHN_UNDEF || !sym->st_name)
            continue; /* the module's own definition: it is the defining one */
        const char *name = d->strtab + sym->st_name;
        const char *want = required_version(d, si);
        const rpg_hook *h = table_find(c->table, name, want);
        if (!h)
            continue;
        uintptr_t slot = m->base + r[k].r_offset;
        uintptr_t cur = __atomic_load_n((uintptr_t *)slot, __ATOMIC_ACQUIRE);
        if (cur == (uintptr_t)h->wrapper)
            continue; /* patched by an earlier scan */
        void *real = __atomic_load_n(h->real, __ATOMIC_ACQUIRE);
        if (!real) {
            const char *v = want ? want : h->version;
            real = v ? dlvsym(handle, name, v) : NULL;
            if (!real)
                real = dlsym(handle, name);
            if (real && rpg__in_self(real))
                real = NULL;
            if (!real)
                real = rpg__attach_lookup(name, v);
            if (!real)
                continue; /* nothing defines it: the slot stays as it is */
            __atomic_store_n(h->real, real, __ATOMIC_RELEASE);
        }
        if (module_holds(m, (uintptr_t)real))
            continue;
        uint32_t mi;
        if (module_index(m, &mi) != 0) {
            c->err = -ENOMEM;
            return;
        }
        saved_slot *s = vec_push(&g_saved);
        if (!s) {
            c->err = -ENOMEM;
            return;
        }
        *s = (saved_slot){slot, cur, (uintptr_t)h->wrapper, mi};
        int rc = store_slot(c->regions, slot, (uintptr_t)h->wrapper);
        if (rc != 0) {
            g_saved.n--;
            c->err = rc;
            continue;
        }
        c->written++;
    }
}

int rpg_got_patch(const rpg_hook *hooks, size_t n)
{
    hook_table t;
    if (table_build(&t, hooks, n) != 0)
        return -ENOMEM;
    vec mods = {NULL, 0, 0, sizeof(module)};
    vec regions = {NULL, 0, 0, sizeof(region)};
    pthread_mutex_lock(&g_got_lock);
    int rc = list_modules(&mods, NULL);
    if (rc == 0)
        rc = read_regions(&regions);
    patch_ctx c = {&t, &regions, 0, 0};
    for (size_t i = 0; rc == 0 && i < mods.n; i++) {
        const module *m = (const module *)mods.p + i;
        void *h = pin(m);
        if (!h)
            continue;
        dyninfo d;
        if (read_dynamic(m, &d) == 0) {
            patch_relocs(&c, m, h, &d, d.rela, d.relasz);
            if (d.pltrel_is_rela)
                patch_relocs(&c, m, h, &d, d.jmprel, d.pltrelsz);
        }
        dlclose(h);
        if (c.err == -ENOMEM)
            break;
    }
    pthread_mutex_unlock(&g_got_lock);
    vec_free(&regions);
    vec_free(&mods);
    vec_free(&t.mem);
    if (rc != 0)
        return rc;
    if (c.err != 0 && c.written == 0)
        return c.err;
    return c.written;
}

int rpg_got_restore(void)
{
    vec regions = {NULL, 0, 0, sizeof(region)};
    pthread_mutex_lock(&g_got_lock);
    int restored = 0;
    if (g_saved.n && read_regions(&regions) == 0) {
        saved_slot *s = g_saved.p;
        const module *mods = g_mods.p;
        /* Newest first: a slot written twice (never, but cheap) ends with
         * its first value. */
        for (size_t mi = 0; mi < g_mods.n; mi++) {
            void *h = pin(&mods[mi]);
            if (!h)
                continue; /* unloaded meanwhile: its slots went with it */
            for (size_t i = g_saved.n; i-- > 0;) {
                if (s[i].module != mi)
                    continue;
                if (__atomic_load_n((uintptr_t *)s[i].slot, __ATOMIC_ACQUIRE) != s[i].now)
                    continue; /* someone else changed it since: theirs */
                if (store_slot(&regions, s[i].slot, s[i].old) == 0)
                    restored++;
            }
            dlclose(h);
        }
    }
    vec_free(&g_saved);
    vec_free(&g_mods);
    pthread_mutex_unlock(&g_got_lock);
    vec_free(&regions);
    return restored;
}

void rpg__got_after_fork(void) { pthread_mutex_init(&g_got_lock, NULL); }

void rpg__got_forget(void)
{
    vec_free(&g_saved);
    vec_free(&g_mods);
    pthread_mutex_init(&g_got_lock, NULL);
}

/* ---- lookups in the defining module ------------------------------------- */

static void *lookup_in(void *h, const char *name, const char *version)
{
    void *p = version ? dlvsym(h, name, version) : NULL;
    if (!p)
        p = dlsym(h, name);
    return p && !rpg__in_self(p) ? p : NULL;
}

void *rpg__attach_lookup(const char *name, const char *version)
{
    void *h = dlopen(NULL, RTLD_LAZY);
    void *p = h ? lookup_in(h, name, version) : NULL;
    if (h)
        dlclose(h);
    if (p)
        return p;
    vec mods = {NULL, 0, 0, sizeof(module)};
    if (list_modules(&mods, NULL) == 0) {
        for (size_t i = 0; !p && i < mods.n; i++) {
            const module *m = (const module *)mods.p + i;
            if (!m->name[0])
                continue;
            void *mh = pin(m);
            if (!mh)
                continue;
            p = lookup_in(mh, name, version);
            dlclose(mh);
        }
    }
    vec_free(&mods);
    return p;
}
