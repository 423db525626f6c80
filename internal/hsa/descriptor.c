/*
 * descriptor.c: register counts from an AMDHSA kernel descriptor (code object
 * v3+ layout: compute_pgm_rsrc3 at +44, rsrc1 at +48, kernel_code_properties
 * at +56), decoded as rocprofv3 (rocprofiler-sdk's code-object tracing)
 * decodes them, since users compare the two tools' columns:
 *
 *   arch VGPRs   (GRANULATED_WORKITEM_VGPR_COUNT + 1) * (wave32 ? 8 : 4), or
 *                on gfx90a/gfx94x/gfx95x (ACCUM_OFFSET + 1) * 4;
 *   accum VGPRs  gfx908: the arch count again (its AGPR file mirrors the
 *                VGPRs); gfx90a/gfx94x/gfx95x: (GRANULATED_WORKITEM_VGPR_COUNT
 *                + 1) * 8 - arch VGPRs (the unified file past ACCUM_OFFSET,
 *                in 8-register granules, so a kernel without AGPRs can show
 *                4); elsewhere 0;
 *   SGPRs        gfx10 and later: 128 (always allocated); before:
 *                (GRANULATED_WAVEFRONT_SGPR_COUNT / 2 + 1) * 16, i.e. the
 *                8-register encoding granule rounded up to 16.
 *
 * Which rule applies is data (the table below), per architecture.
 */
#include <string.h>

#include "shim.h"

enum vgpr_rule {
    VGPR_GRANULE,      /* (rsrc1 VGPR granule + 1) * (wave32 ? 8 : 4) */
    VGPR_ACCUM_OFFSET, /* (rsrc3 ACCUM_OFFSET + 1) * 4 */
};

enum agpr_rule {
    AGPR_NONE,         /* 0 */
    AGPR_SAME_AS_ARCH, /* the arch VGPR count */
    AGPR_UNIFIED_REST, /* (rsrc1 VGPR granule + 1) * 8 - arch VGPRs */
};

enum sgpr_rule {
    SGPR_GRANULE16, /* (rsrc1 SGPR granule / 2 + 1) * 16 */
    SGPR_FIXED_128, /* 128 */
};

typedef struct arch_regs {
    uint32_t major_lo, major_hi;
    uint32_t minor_lo, minor_hi; /* minor*16 + stepping, inclusive */
    enum vgpr_rule vgpr;
    enum agpr_rule agpr;
    enum sgpr_rule sgpr;
} arch_regs;

/* The first row that matches applies; the last matches every architecture
 * (rocprofv3 decodes any agent's descriptor, gfx7 and gfx8 included). */
static const arch_regs arches[] = {
    {9, 9, 0x08, 0x08, VGPR_GRANULE, AGPR_SAME_AS_ARCH, SGPR_GRANULE16},      /* gfx908 */
    {9, 9, 0x0a, 0x0a, VGPR_ACCUM_OFFSET, AGPR_UNIFIED_REST, SGPR_GRANULE16}, /* gfx90a */
    {9, 9, 0x40, 0x4f, VGPR_ACCUM_OFFSET, AGPR_UNIFIED_REST, SGPR_GRANULE16}, /* gfx94x */
    {9, 9, 0x50, 0x5f, VGPR_ACCUM_OFFSET, AGPR_UNIFIED_REST, SGPR_GRANULE16}, /* gfx95x */
    {10, 0xffffffffu, 0x00, 0xff, VGPR_GRANULE, AGPR_NONE, SGPR_FIXED_128},   /* gfx10+ */
    {0, 0xffffffffu, 0x00, 0xff, VGPR_GRANULE, AGPR_NONE, SGPR_GRANULE16},    /* the rest */
};

void shim_decode_descriptor(const void *kd, uint32_t major, uint32_t minor, uint32_t *vgpr,
                            uint32_t *agpr, uint32_t *sgpr)
{
    uint32_t rsrc1, rsrc3;
    uint16_t props;
    memcpy(&rsrc3, (const char *)kd + 44, 4);
    memcpy(&rsrc1, (const char *)kd + 48, 4);
    memcpy(&props, (const char *)kd + 56, 2);
    const arch_regs *r = &arches[sizeof arches / sizeof arches[0] - 1];
    for (size_t i = 0; i < sizeof arches / sizeof arches[0]; i++)
        if (major >= arches[i].major_lo && major <= arches[i].major_hi &&
            minor >= arches[i].minor_lo && minor <= arches[i].minor_hi) {
            r = &arches[i];
            break;
        }
    uint32_t vgpr_granules = (rsrc1 & 0x3f) + 1;     /* GRANULATED_WORKITEM_VGPR_COUNT */
    uint32_t sgpr_granules = (rsrc1 >> 6) & 0xf;     /* GRANULATED_WAVEFRONT_SGPR_COUNT */
    uint32_t accum_offset = rsrc3 & 0x3f;            /* ACCUM_OFFSET (gfx90a+) */
    int wave32 = (props >> 10) & 1;                  /* ENABLE_WAVEFRONT_SIZE32 */

    *vgpr = r->vgpr == VGPR_ACCUM_OFFSET ? (accum_offset + 1) * 4 : vgpr_granules * (wave32 ? 8 : 4);
    switch (r->agpr) {
    case AGPR_SAME_AS_ARCH:
        *agpr = *vgpr;
        break;
    case AGPR_UNIFIED_REST:
        /* An ACCUM_OFFSET past the allocation is a malformed descriptor:
         * no AGPRs rather than a wrapped count. */
        *agpr = vgpr_granules * 8 > *vgpr ? vgpr_granules * 8 - *vgpr : 0;
        break;
    default:
        *agpr = 0;
    }
    *sgpr = r->sgpr == SGPR_FIXED_128 ? 128 : (sgpr_granules / 2 + 1) * 16;
}
