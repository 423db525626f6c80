/*
 * guard.c: process identity for the "Go is ready in this pid" rule.
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
