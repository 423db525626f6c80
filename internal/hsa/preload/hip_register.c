/* HIP's kernel registration: __hipRegisterFunction pairs each kernel's host
 * stub (the address hipLaunchKernel is given) with its device function
 * name. The generated wrapper hands both here, traced or not, once per
 * kernel at module load; the spool keeps the pair as a string
 * (RPG_STRTAB_HOST_FUNCTION), from which the CLI writes rocprofv3's JSON
 * host_functions. */
#include <stdint.h>
#include <string.h>

#include "hip_trace.h"

void rpg_hip_host_function(const void *host, const void *device)
{
    /* Kernels are what these name: only worth keeping when dispatches are
     * recorded (the shim's kernel trace shares the domain mask). */
    if (!host || !device || !(rpg_domains & (RPG_DOMAIN_KERNEL | RPG_DOMAIN_HIP_RUNTIME | RPG_DOMAIN_HIP_COMPILER)))
        return;
    const char *name = (const char *)device;
    rpg_record_string(RPG_STRTAB_HOST_FUNCTION, (uint64_t)(uintptr_t)host, name, strnlen(name, 4096));
}
