//go:build cgo

package faultguard

/*
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

// A spool is read through a MAP_SHARED mapping of its file. A file cut
// short while mapped (by its owner, or by whoever could write it) makes
// every access past its new end fault with SIGBUS, which the Go runtime
// turns into a fatal error. This handler runs first: a SIGBUS inside a
// watched mapping replaces the mapping from the faulting page to its end
// with zero pages (the load then retries and reads zeros: no record) and
// remembers where; any other SIGBUS goes on to the handler it replaced
// (Go's), as before.

#define RPG_FAULT_SLOTS 1024

typedef struct {
	uintptr_t base, len;
	uintptr_t torn_at; // 1 + offset of the first page replaced; 0: none
	int used;
} rpg_fault_slot;

static rpg_fault_slot rpg_fault_slots[RPG_FAULT_SLOTS];
static struct sigaction rpg_fault_prev;
static uintptr_t rpg_fault_page;

static void rpg_fault_handler(int sig, siginfo_t *si, void *uc) {
	uintptr_t a = (uintptr_t)si->si_addr;
	for (int i = 0; i < RPG_FAULT_SLOTS; i++) {
		rpg_fault_slot *s = &rpg_fault_slots[i];
		if (!__atomic_load_n(&s->used, __ATOMIC_ACQUIRE) || a < s->base || a >= s->base + s->len) {
			continue;
		}
		uintptr_t from = a & ~(rpg_fault_page - 1);
		if (mmap((void *)from, s->base + s->len - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED) {
			break;
		}
		uintptr_t at = from - s->base + 1, prev = __atomic_load_n(&s->torn_at, __ATOMIC_RELAXED);
		if (prev == 0 || at < prev) {
			__atomic_store_n(&s->torn_at, at, __ATOMIC_RELEASE);
		}
		return;
	}
	if (rpg_fault_prev.sa_flags & SA_SIGINFO) {
		rpg_fault_prev.sa_sigaction(sig, si, uc);
	} else if (rpg_fault_prev.sa_handler != SIG_DFL && rpg_fault_prev.sa_handler != SIG_IGN) {
		rpg_fault_prev.sa_handler(sig);
	} else {
		signal(sig, SIG_DFL);
		raise(sig);
	}
}

static int rpg_fault_install(void) {
	rpg_fault_page = (uintptr_t)sysconf(_SC_PAGESIZE);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	if (sigaction(SIGBUS, NULL, &rpg_fault_prev) != 0) {
		return -1;
	}
	sa.sa_sigaction = rpg_fault_handler;
	sa.sa_mask = rpg_fault_prev.sa_mask;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
	return sigaction(SIGBUS, &sa, NULL);
}

static int rpg_fault_watch(uintptr_t base, uintptr_t len) {
	for (int i = 0; i < RPG_FAULT_SLOTS; i++) {
		int unused = 0;
		rpg_fault_slot *s = &rpg_fault_slots[i];
		if (__atomic_load_n(&s->used, __ATOMIC_ACQUIRE)) {
			continue;
		}
		s->base = base;
		s->len = len;
		s->torn_at = 0;
		if (__atomic_compare_exchange_n(&s->used, &unused, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			return i;
		}
	}
	return -1;
}

static uintptr_t rpg_fault_torn_at(int i) {
	return __atomic_load_n(&rpg_fault_slots[i].torn_at, __ATOMIC_ACQUIRE);
}

static uintptr_t rpg_fault_unwatch(int i) {
	rpg_fault_slot *s = &rpg_fault_slots[i];
	uintptr_t at = __atomic_load_n(&s->torn_at, __ATOMIC_ACQUIRE);
	__atomic_store_n(&s->used, 0, __ATOMIC_RELEASE);
	return at;
}
*/
import "C"

import (
	"sync"
	"unsafe"

	"github.com/rocprof-go/rocprof-go/internal/tracing"
)

func init() { tracing.SetMappingGuard(guard{}) }

// Watch slots are claimed by Go code under watchMu (the handler only
// reads them), so base and len are never written while a slot is seen.
var (
	installOnce sync.Once
	installed   bool
	watchMu     sync.Mutex
)

// guard is tracing.MappingGuard through the C handler above.
type guard struct{}

func (guard) Watch(data []byte) int {
	installOnce.Do(func() { installed = C.rpg_fault_install() == 0 })
	if !installed || len(data) == 0 {
		return -1
	}
	watchMu.Lock()
	defer watchMu.Unlock()
	return int(C.rpg_fault_watch(C.uintptr_t(uintptr(unsafe.Pointer(&data[0]))), C.uintptr_t(len(data))))
}

func (guard) Unwatch(slot int) int64 {
	if slot < 0 {
		return -1
	}
	watchMu.Lock()
	defer watchMu.Unlock()
	return int64(C.rpg_fault_unwatch(C.int(slot))) - 1
}

func (guard) TornAt(slot int) int64 {
	if slot < 0 {
		return -1
	}
	return int64(C.rpg_fault_torn_at(C.int(slot))) - 1
}
