/*
 * descriptor.c: register counts from an AMDHSA kernel descriptor (code object
 * v3+ layout: compute_pgm_rsrc3 at +44, rsrc1 at +48, kernel_code_properties
 * at +56). The encoding granules differ per architecture; they are data in
 * the table below, not branches.
 */
#include <string.h>

#include "shim.h"

typedef struct arch_granules {
    uint32_t major;
    uint32_t minor_lo, minor_hi; /* minor*16 + stepping, inclusive */
    uint32_t vgpr_wave64;        /* VGPR encoding granule, wave64 */
    uint32_t vgpr_wave32;        /* ... wave32 (0: no wave32) */
    uint32_t sgpr;               /* SGPR encoding granule (0: fixed count below) */
    uint32_t sgpr_fixed;
    uint32_t accum_offset;       /* 1: rsrc3 ACCUM_OFFSET splits VGPRs into arch + AGPRs */
} arch_granules;

static const arch_granules arches[] = {
    {9, 0x00, 0x09, 4, 0, 8, 0, 0},  /* gfx900..gfx909 (gfx908 AGPRs are not encoded) */
    {9, 0x0a, 0x0a, 8, 0, 8, 0, 1},  /* gfx90a */
    {9, 0x0b, 0x0c, 4, 0, 8, 0, 0},  /* gfx90c */
    {9, 0x40, 0x4f, 8, 0, 8, 0, 1},  /* gfx94x */
    {10, 0x00, 0xff, 4, 8, 0, 128, 0},
    {11, 0x00, 0xff, 4, 8, 0, 128, 0},
    {12, 0x00, 0xff, 4, 8, 0, 128, 0},
};

void shim_decode_descriptor(const void *kd, uint32_t major, uint32_t minor, uint32_t *vgpr,
                            uint32_t *agpr, uint32_t *sgpr)
{
    uint32_t rsrc1, rsrc3;
    uint16_t props;
    memcpy(&rsrc3, (const char *)kd + 44, 4);
    memcpy(&rsrc1, (const char *)kd + 48, 4);
    memcpy(&props, (const char *)kd + 56, 2);
    *vgpr = *agpr = *sgpr = 0;
    const arch_granules *g = NULL;
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
        if (arches[i].major == major && minor >= arches[i].minor_lo && minor <= arches[i].minor_hi)
            g = &arches[i];
    if (!g)
        return;
    int wave32 = (props >> 10) & 1;
    uint32_t vg = wave32 && g->vgpr_wave32 ? g->vgpr_wave32 : g->vgpr_wave64;
    uint32_t total = ((rsrc1 & 0x3f) + 1) * vg;
    if (g->accum_offset) {
        uint32_t arch = ((rsrc3 & 0x3f) + 1) * 4;
        if (arch > total)
            arch = total;
        *vgpr = arch;
        /* AGPRs start at ACCUM_OFFSET and the total is rounded up to the
         * granule: only space beyond the rounded architected part is AGPRs
         * (exact counts are in the code object's metadata, not here). */
        uint32_t arch_rounded = (arch + vg - 1) / vg * vg;
        *agpr = total > arch_rounded ? total - arch : 0;
    } else {
        *vgpr = total;
    }
    *sgpr = g->sgpr ? (((rsrc1 >> 6) & 0xf) + 1) * g->sgpr : g->sgpr_fixed;
}
