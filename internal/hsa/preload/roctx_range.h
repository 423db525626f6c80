/*
 * roctx_range.h: ROCTx state the preload library exposes to the HSA shim.
 *
 * rpg_roctx_thread_range returns the message of the calling thread's
 * innermost open roctxRangePushA range (its length in *len), or NULL when
 * none is open or marker tracing is off. It is what --kernel-rename names a
 * kernel dispatched on this thread after. The pointer stays valid until the
 * thread pops that range: copy it into the record.
 */
#ifndef RPG_ROCTX_RANGE_H
#define RPG_ROCTX_RANGE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

__attribute__((visibility("default"))) const char *rpg_roctx_thread_range(size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* RPG_ROCTX_RANGE_H */
