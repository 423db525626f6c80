/*
 * attach_weak.c: weak stand-ins for the HSA side of attach mode
 * (rpg_attach.h), so that the library links and attaches (HIP and ROCTx
 * only) before attach_hsa.c exists; its strong definitions replace these.
 * In a file of their own, so that no reader in the same translation unit
 * folds the weak values.
 */
#include "rpg_attach.h"

__attribute__((weak)) const rpg_hook rpg_attach_hsa_hooks[1];
__attribute__((weak)) const size_t rpg_attach_hsa_nhooks = 0;

__attribute__((weak)) int rpg_attach_hsa_start(void) { return 0; }

__attribute__((weak)) void rpg_attach_hsa_poll(void) {}

__attribute__((weak)) uint64_t rpg_attach_hsa_stop(void) { return 0; }
