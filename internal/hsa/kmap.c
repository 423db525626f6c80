/*
 * kmap.c: kernel_object -> kernel id and register counts, written by Go when
 * an executable is frozen and read by the completion threads for every
 * dispatch.
 */
#include <pthread.h>
#include <stdlib.h>

#include "shim.h"

/* Open addressing, never deleted from (code objects are rarely unloaded and
 * kernel_object addresses are not reused while an id is still useful). A
 * reader sees an entry once its key is published. The table doubles at half
 * load (ML libraries load tens of thousands of kernels); the old one is kept,
 * since a reader may still be walking it, and it holds a subset of the new. */
typedef struct kmap_entry {
    uint64_t key;
    shim_kernel_info info;
} kmap_entry;

typedef struct kmap_table {
    uint32_t mask;
    uint32_t used;
    kmap_entry e[];
} kmap_table;

static kmap_table *kmap;
static pthread_mutex_t kmap_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t kmap_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k;
}

static kmap_table *kmap_new(uint32_t size)
{
    kmap_table *t = calloc(1, sizeof(kmap_table) + (size_t)size * sizeof(kmap_entry));
    if (t)
        t->mask = size - 1;
    return t;
}

/* Inserts or updates; the caller holds kmap_lock. */
static void kmap_insert(kmap_table *t, uint64_t ko, const shim_kernel_info *info)
{
    for (uint32_t i = kmap_hash(ko) & t->mask;; i = (i + 1) & t->mask) {
        kmap_entry *e = &t->e[i];
        if (e->key == ko) {
            /* A reused address (code object unloaded and another loaded):
             * the newest symbol wins. */
            e->info = *info;
            return;
        }
        if (e->key == 0) {
            e->info = *info;
            __atomic_store_n(&e->key, ko, __ATOMIC_RELEASE);
            t->used++;
            return;
        }
    }
}

void shim_kmap_put(uint64_t ko, const shim_kernel_info *info)
{
    if (!ko)
        return;
    pthread_mutex_lock(&kmap_lock);
    kmap_table *t = kmap;
    if (!t || (t->used + 1) * 2 > t->mask + 1) {
        kmap_table *n = kmap_new(t ? (t->mask + 1) * 2 : 4096);
        if (n) {
            if (t)
                for (uint32_t i = 0; i <= t->mask; i++)
                    if (t->e[i].key)
                        kmap_insert(n, t->e[i].key, &t->e[i].info);
            __atomic_store_n(&kmap, n, __ATOMIC_RELEASE);
            t = n;
        }
    }
    if (t && (t->used + 1) * 4 <= (t->mask + 1) * 3)
        kmap_insert(t, ko, info);
    pthread_mutex_unlock(&kmap_lock);
}

int shim_kmap_get(uint64_t ko, shim_kernel_info *out)
{
    kmap_table *t = __atomic_load_n(&kmap, __ATOMIC_ACQUIRE);
    if (!t || !ko)
        return 0;
    for (uint32_t i = kmap_hash(ko) & t->mask, n = 0; n <= t->mask; i = (i + 1) & t->mask, n++) {
        uint64_t k = __atomic_load_n(&t->e[i].key, __ATOMIC_ACQUIRE);
        if (k == ko) {
            *out = t->e[i].info;
            return 1;
        }
        if (k == 0)
            return 0;
    }
    return 0;
}
