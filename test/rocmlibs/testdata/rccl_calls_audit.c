/*
 * rccl_calls_audit.c: an LD_AUDIT library that counts the RCCL calls a
 * program makes, independently of rocprof-go's interposers: the dynamic
 * linker reports every call through the main program's PLT to a function
 * named nccl* or mscclLoadAlgo/mscclRunAlgo/mscclUnloadAlgo
 * (la_x86_64_gnu_pltenter), whoever defines it (RCCL, or the preload
 * library's wrapper in front of it). Calls RCCL makes to itself, or other
 * libraries make, are not the main program's and are not counted.
 *
 * At exit, the main program of a process writes "name count" lines to
 * $RCCL_CALLS_AUDIT_DIR/<pid>.calls (only processes that called RCCL).
 * test/rocmlibs compiles it with gcc and compares with the spool.
 */
#define _GNU_SOURCE
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_NAMES 128

static struct {
    char name[64];
    unsigned long count;
} counts[MAX_NAMES];
static int ncounts;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uintptr_t *main_cookie;

static int is_rccl(const char *name)
{
    return !strncmp(name, "nccl", 4) || !strncmp(name, "msccl", 5);
}

unsigned int la_version(unsigned int version)
{
    (void)version;
    return LAV_CURRENT;
}

/* Calls from the main program (the first object opened) to anything are
 * reported; la_symbind64 then keeps only RCCL's functions. */
unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
    (void)lmid;
    if (!main_cookie && map->l_name && map->l_name[0] == 0) {
        main_cookie = cookie;
        return LA_FLG_BINDFROM | LA_FLG_BINDTO;
    }
    return LA_FLG_BINDTO;
}

uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook, uintptr_t *defcook,
                       unsigned int *flags, const char *symname)
{
    (void)ndx;
    (void)defcook;
    if (refcook != main_cookie || !is_rccl(symname))
        *flags |= LA_SYMB_NOPLTENTER | LA_SYMB_NOPLTEXIT;
    else
        *flags |= LA_SYMB_NOPLTEXIT;
    return sym->st_value;
}

Elf64_Addr la_x86_64_gnu_pltenter(Elf64_Sym *sym, unsigned int ndx, uintptr_t *refcook,
                                  uintptr_t *defcook, La_x86_64_regs *regs, unsigned int *flags,
                                  const char *symname, long int *framesizep)
{
    (void)ndx;
    (void)refcook;
    (void)defcook;
    (void)regs;
    (void)flags;
    (void)framesizep;
    pthread_mutex_lock(&lock);
    int i = 0;
    while (i < ncounts && strcmp(counts[i].name, symname))
        i++;
    if (i == ncounts && ncounts < MAX_NAMES) {
        snprintf(counts[i].name, sizeof counts[i].name, "%s", symname);
        ncounts++;
    }
    if (i < MAX_NAMES)
        counts[i].count++;
    pthread_mutex_unlock(&lock);
    return sym->st_value;
}

/* The main program closes last, at exit. */
unsigned int la_objclose(uintptr_t *cookie)
{
    const char *dir = getenv("RCCL_CALLS_AUDIT_DIR");
    if (cookie != main_cookie || !dir || !ncounts)
        return 0;
    char path[4096];
    snprintf(path, sizeof path, "%s/%d.calls", dir, (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f)
        return 0;
    for (int i = 0; i < ncounts; i++)
        fprintf(f, "%s %lu\n", counts[i].name, counts[i].count);
    fclose(f);
    return 0;
}
