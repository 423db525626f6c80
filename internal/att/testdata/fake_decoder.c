/* A stand-in for librocprof-trace-decoder.so, for tests: the same exported
 * entry points and record layouts, decoding the virtual GPU's synthetic SQTT
 * format (docs/virtual-gpu.md, "Synthetic SQTT") into a few deterministic
 * records:
 *
 * - GFXIP: 9 when the data starts with AQLprofile's gfx9 header, else 11;
 * - code-object markers among the user-data words (USERDATA_2 pairs
 *   opcode 4 | channel << 8, value; header last) give each loaded code
 *   object's id, address and size: a PC inside one is reported as (ELF
 *   vaddr, id), else as a raw address with id 0;
 * - per traced dispatch record: an occupancy start and end for each of
 *   min(waves, 4) waves, PC = the dispatch's kernel object;
 * - per dispatch: min(waves, 2) waves on CU 0, each with a 3-state timeline
 *   and 4 instructions, the first at the kernel object, each next one
 *   memory_size bytes further as the ISA callback answers;
 * - with FAKE_DECODER_PERFEVENTS=1 in the environment: two perf events per
 *   dispatch;
 * - an INFO record (DATA_LOST) when the trace holds no dispatch.
 *
 * Malformed data returns INVALID_SHADER_DATA. Built with -DFAKE_DECODER_CRASH
 * it aborts instead of parsing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t addr, marker_id; } pc_t;
typedef struct {
    pc_t pc;
    uint64_t time;
    uint8_t reserved, cu, simd, wave_id;
    uint32_t start : 1;
    uint32_t rsvd : 31;
} occupancy_t;
typedef struct {
    int64_t time;
    uint16_t e0, e1, e2, e3;
    uint8_t cu, bank;
} perfevent_t;
typedef struct { int32_t type, duration; } wstate_t;
typedef struct {
    uint32_t category : 8;
    uint32_t stall : 24;
    int32_t duration;
    int64_t time;
    pc_t pc;
} inst_t;
typedef struct {
    uint8_t cu, simd, wave_id, contexts;
    uint32_t r1, r2, r3;
    int64_t begin, end;
    uint64_t timeline_size, instructions_size;
    wstate_t *timeline;
    inst_t *insts;
} wave_t;

typedef int (*trace_cb)(int, void *, uint64_t, void *);
typedef int (*isa_cb)(char *, uint64_t *, uint64_t *, pc_t, void *);
typedef uint64_t (*se_cb)(uint8_t **, uint64_t *, void *);

static uint32_t rd32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t rd64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static int parse_one(const uint8_t *d, uint64_t n, trace_cb tcb, isa_cb icb, void *ud)
{
    uint64_t gfxip = 11;
    if (n >= 8 && (rd64(d) & 0x1FFF) == 0x11) {
        gfxip = 9;
        d += 8;
        n -= 8;
    }
    if (n < 32 || memcmp(d, "VGPUSQTT", 8) != 0)
        return 4;
    uint32_t ndisp = rd32(d + 16), nuser = rd32(d + 20);
    uint64_t off = 32 + (((uint64_t)nuser * 4 + 31) / 32) * 32;
    if (off + (uint64_t)ndisp * 32 > n)
        return 4;
    struct { uint64_t id, addr, size; } cos[64];
    int nco = 0;
    uint64_t m[7] = {0};
    for (uint32_t i = 0; i + 1 < nuser; i++) {
        uint32_t w = rd32(d + 32 + 4 * (uint64_t)i), v = rd32(d + 36 + 4 * (uint64_t)i);
        if (w == 0x434F5200) { /* "\0ROC" + its info word */
            i++;
        } else if (w == 5) { /* timestamp: three words follow */
            i += 3;
        } else if ((w & 0xFF) == 4 && (w >> 8) <= 6) {
            m[w >> 8] = v;
            i++;
            if ((w >> 8) == 0) { /* header: bit 0 unload, bit 1 from start, id << 2 */
                uint64_t id = (v >> 2) ? (v >> 2) : (m[5] | m[6] << 32);
                if (!(v & 1) && nco < 64) {
                    cos[nco].id = id;
                    cos[nco].addr = m[2] | m[3] << 32;
                    cos[nco].size = m[1] | m[4] << 32;
                    nco++;
                }
                memset(m, 0, sizeof m);
            }
        }
    }
    tcb(0, (void *)(uintptr_t)gfxip, 0, ud);
    if (ndisp == 0) {
        int info = 1;
        tcb(4, &info, 1, ud);
    }
    int perf = getenv("FAKE_DECODER_PERFEVENTS") && strcmp(getenv("FAKE_DECODER_PERFEVENTS"), "1") == 0;
    int64_t t0 = 1000;
    for (uint32_t k = 0; k < ndisp; k++) {
        const uint8_t *r = d + off + (uint64_t)k * 32;
        uint64_t kobj = rd64(r), waves = rd64(r + 8), marker = 0;
        for (int c = 0; c < nco; c++)
            if (kobj >= cos[c].addr && kobj < cos[c].addr + cos[c].size) {
                marker = cos[c].id;
                kobj -= cos[c].addr;
            }
        uint64_t nocc = waves < 4 ? waves : 4, nw = waves < 2 ? waves : 2;
        occupancy_t occ[8];
        memset(occ, 0, sizeof occ);
        for (uint64_t w = 0; w < nocc; w++) {
            occ[2 * w] = (occupancy_t){{kobj, marker}, (uint64_t)(t0 + 10 * w), 0, 0, (uint8_t)(w % 4), (uint8_t)(w / 4), 1, 0};
            occ[2 * w + 1] = (occupancy_t){{kobj, marker}, (uint64_t)(t0 + 10 * w + 400), 0, 0, (uint8_t)(w % 4), (uint8_t)(w / 4), 0, 0};
        }
        if (nocc)
            tcb(1, occ, 2 * nocc, ud);
        if (perf) {
            perfevent_t pe[2] = {{t0 + 100, 1, 2, 3, 4, 0, 0}, {t0 + 200, 5, 6, 7, 8, 0, 1}};
            tcb(2, pe, 2, ud);
        }
        wave_t wv[2];
        wstate_t tl[2][3];
        inst_t in[2][4];
        for (uint64_t w = 0; w < nw; w++) {
            int64_t b = t0 + 10 * (int64_t)w;
            tl[w][0] = (wstate_t){2, 100};
            tl[w][1] = (wstate_t){4, 50};
            tl[w][2] = (wstate_t){2, 250};
            uint64_t addr = kobj;
            for (int i = 0; i < 4; i++) {
                char text[128];
                uint64_t memsize = 0, size = sizeof text;
                pc_t pc = {addr, marker};
                int s = icb(text, &memsize, &size, pc, ud);
                if (s != 0 || memsize == 0)
                    memsize = 4;
                in[w][i] = (inst_t){(uint32_t)(i == 3 ? 7 : 2), (uint32_t)(5 * i), 20 + 10 * i, b + 8 + 40 * i, pc};
                addr += memsize;
            }
            wv[w] = (wave_t){0, (uint8_t)(w % 4), (uint8_t)(w / 4), 0, 0, 0, 0, b, b + 400, 3, 4, tl[w], in[w]};
        }
        if (nw)
            tcb(3, wv, nw, ud);
        t0 += 1000;
    }
    return 0;
}

int rocprof_trace_decoder_parse_data(se_cb scb, trace_cb tcb, isa_cb icb, void *ud)
{
#ifdef FAKE_DECODER_CRASH
    abort(); /* built with -DFAKE_DECODER_CRASH: a decoder that brings its process down */
#endif
    int status = 0;
    for (;;) {
        uint8_t *buf = NULL;
        uint64_t size = 0;
        uint64_t left = scb(&buf, &size, ud);
        if (left == 0 || buf == NULL || size == 0)
            break;
        status = parse_one(buf, size, tcb, icb, ud);
        if (status != 0)
            break;
    }
    return status;
}

const char *rocprof_trace_decoder_get_info_string(int info)
{
    return info == 1 ? "fake decoder: data lost" : "fake decoder: info";
}

const char *rocprof_trace_decoder_get_status_string(int status)
{
    return status == 4 ? "fake decoder: invalid shader data" : "fake decoder: status";
}
