/*
 * guard.c: process identity for the "Go is ready in this pid" rule, and the
 * kernel_object map the completion threads read.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "shim.h"

volatile int32_t shim_pid;
volatile int32_t shim_go_pid;
int32_t shim_loaded_pid;
shim_stats shim_counters;

static void after_fork_child(void) { shim_pid = (int32_t)getpid(); }

__attribute__((constructor)) static void shim_init(void)
{
    shim_pid = shim_loaded_pid = (int32_t)getpid();
    pthread_atfork(NULL, NULL, after_fork_child);
}

void shim_mark_go_ready(void) { __atomic_store_n(&shim_go_pid, (int32_t)getpid(), __ATOMIC_RELEASE); }

/* Open addressing, never deleted from (code objects are rarely unloaded and
 * kernel_object addresses are not reused while an id is still useful). A
 * reader sees an entry once its key is published. */
#define KMAP_BITS 16
#define KMAP_SIZE (1u << KMAP_BITS)

typedef struct kmap_entry {
    uint64_t key;
    shim_kernel_info info;
} kmap_entry;

static kmap_entry *kmap;
static pthread_mutex_t kmap_lock = PTHREAD_MUTEX_INITIALIZER;

static uint32_t kmap_hash(uint64_t k)
{
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)k & (KMAP_SIZE - 1);
}

void shim_kmap_put(uint64_t ko, const shim_kernel_info *info)
{
    if (!ko)
        return;
    pthread_mutex_lock(&kmap_lock);
    if (!kmap)
        __atomic_store_n(&kmap, calloc(KMAP_SIZE, sizeof(kmap_entry)), __ATOMIC_RELEASE);
    if (kmap) {
        for (uint32_t i = kmap_hash(ko), n = 0; n < KMAP_SIZE; i = (i + 1) & (KMAP_SIZE - 1), n++) {
            kmap_entry *e = &kmap[i];
            if (e->key == ko) {
                /* A reused address (code object unloaded and another loaded):
                 * the newest symbol wins. */
                e->info = *info;
                break;
            }
            if (e->key == 0) {
                e->info = *info;
                __atomic_store_n(&e->key, ko, __ATOMIC_RELEASE);
                break;
            }
        }
    }
    pthread_mutex_unlock(&kmap_lock);
}

int shim_kmap_get(uint64_t ko, shim_kernel_info *out)
{
    kmap_entry *m = __atomic_load_n(&kmap, __ATOMIC_ACQUIRE);
    if (!m || !ko)
        return 0;
    for (uint32_t i = kmap_hash(ko), n = 0; n < KMAP_SIZE; i = (i + 1) & (KMAP_SIZE - 1), n++) {
        uint64_t k = __atomic_load_n(&m[i].key, __ATOMIC_ACQUIRE);
        if (k == ko) {
            *out = m[i].info;
            return 1;
        }
        if (k == 0)
            return 0;
    }
    return 0;
}
