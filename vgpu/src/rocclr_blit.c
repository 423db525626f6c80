/* HIP's own blit kernels (ROCclr "__amd_rocclr_*"), which implement
 * hipMemset, device-to-device hipMemcpy and stream memory operations. HIP
 * compiles them from OpenCL source at run time, and their signatures
 * changed twice (late 2023, then April 2024), so each kernel's layout is
 * picked by the number of explicit arguments its code object's metadata
 * lists, and every argument is read at the offset the metadata gives (or,
 * without metadata, at its natural alignment). The per-work-item behaviour
 * follows the kernels' source (ROCclr's blitcl.cpp; for HIP 5.x, the
 * __amd_copyBuffer* / __amd_fillBuffer* functions of rocm-device-libs):
 * bounds come from the arguments and the grid, exactly as the kernels' own
 * loops do. */
#include <string.h>

#include "vgpu.h"

enum op {
  COPY_ORIGIN,     /* copyBuffer(src, dst, srcOrigin, dstOrigin, size, remain): HIP 5.x */
  COPY_ORIGIN_END, /* copyBuffer(srcI, dstI, srcOrigin, dstOrigin, size, remainder, aligned_size, end_ptr, next_chunk) */
  COPY_END,        /* copyBuffer(src, dst, size, remainder, aligned_size, end_ptr, next_chunk): HIP 6.2+ */
  COPY_END_WG,     /* the same plus workgroup_size (work-item id = group * workgroup_size + local): HIP 7 */
  COPY_ALIGNED,    /* copyBufferAligned(src, dst, srcOrigin, dstOrigin, size, alignment) */
  FILL_VIEWS,      /* fillBufferAligned(bufUChar, bufUShort, bufUInt, bufULong, pattern, patternSize, offset, size) */
  FILL_VIEWS_END,  /* fillBufferAligned(5 views, pattern, pattern_size, offset, end_ptr, next_chunk) */
  FILL_END,        /* fillBufferAligned(buf, pattern, pattern_size, alignment, end_ptr, next_chunk): HIP 6.2+ */
  FILL_END_WG,     /* the same plus workgroup_size: HIP 7 */
  FILL_2D,         /* fillBufferAligned2D(4 views, pattern, patternSize, offset, width, height, pitch) */
  COPY_RECT,       /* copyBufferRect(src, dst, ulong4 srcRect, ulong4 dstRect, ulong4 size) */
  COPY_RECT_ALIGNED,
  STREAM_WRITE,    /* streamOpsWrite(ptrInt, ptrUlong, value) */
  NO_MEMORY,       /* gwsInit, initHeap: nothing the host can observe */
};

struct signature {
  const char *kernel; /* after "__amd_rocclr_" */
  enum op op;
  unsigned nargs;
  uint8_t size[10]; /* bytes of each explicit argument, in order */
};

static const struct signature signatures[] = {
    {"copyBuffer", COPY_ORIGIN, 6, {8, 8, 8, 8, 8, 4}},
    {"copyBuffer", COPY_ORIGIN_END, 9, {8, 8, 8, 8, 8, 4, 4, 8, 4}},
    {"copyBuffer", COPY_END, 7, {8, 8, 8, 4, 4, 8, 4}},
    {"copyBuffer", COPY_END_WG, 8, {8, 8, 8, 4, 4, 8, 4, 4}},
    {"copyBufferAligned", COPY_ALIGNED, 6, {8, 8, 8, 8, 8, 4}},
    {"fillBufferAligned", FILL_VIEWS, 8, {8, 8, 8, 8, 8, 4, 8, 8}},
    {"fillBufferAligned", FILL_VIEWS_END, 10, {8, 8, 8, 8, 8, 8, 4, 8, 8, 4}},
    {"fillBufferAligned", FILL_END, 6, {8, 8, 4, 4, 8, 4}},
    {"fillBufferAligned", FILL_END_WG, 7, {8, 8, 4, 4, 8, 4, 4}},
    {"fillBufferAligned2D", FILL_2D, 10, {8, 8, 8, 8, 8, 4, 8, 8, 8, 8}},
    {"copyBufferRect", COPY_RECT, 5, {8, 8, 32, 32, 32}},
    {"copyBufferRectAligned", COPY_RECT_ALIGNED, 5, {8, 8, 32, 32, 32}},
    {"streamOpsWrite", STREAM_WRITE, 3, {8, 8, 8}},
    {"gwsInit", NO_MEMORY, 1, {4}},
    {"initHeap", NO_MEMORY, 4, {8, 8, 4, 4}},
};

/* The arguments of one dispatch, at the offsets of the code object's
 * metadata, or naturally aligned when it had none. */
struct args {
  const uint8_t *ka;
  uint32_t off[10];
};

static uint64_t u64(const struct args *a, unsigned i) {
  uint64_t v;
  memcpy(&v, a->ka + a->off[i], 8);
  return v;
}
static uint32_t u32(const struct args *a, unsigned i) {
  uint32_t v;
  memcpy(&v, a->ka + a->off[i], 4);
  return v;
}
static uint64_t vec(const struct args *a, unsigned i, unsigned k) {
  uint64_t v;
  memcpy(&v, a->ka + a->off[i] + 8 * k, 8);
  return v;
}

static uint8_t *at(uint64_t gpu_va) { return vgpu_host(gpu_va); }

/* The copies of HIP 6: work-item id copies elements id, id + next_chunk, ...
 * while the element's destination lies below end_ptr; work-item 0 then
 * copies the trailing `remainder` bytes of the size. */
static void copy_end(uint64_t src, uint64_t dst, uint64_t size, uint32_t remainder, uint32_t aligned,
                     uint64_t end, uint32_t next, uint64_t grid) {
  uint64_t el = aligned == 16 ? 16 : 4;
  uint64_t n = end > dst ? (end - dst + el - 1) / el : 0; /* elements below end_ptr */
  if (!next) { /* each work-item copies its own element once */
    memmove(at(dst), at(src), (n < grid ? n : grid) * el);
  } else if (grid >= next || n <= grid) { /* the work-items cover every element */
    memmove(at(dst), at(src), n * el);
  } else {
    for (uint64_t id = 0; id < grid; id++)
      for (uint64_t j = id; j < n; j += next) memmove(at(dst + j * el), at(src + j * el), el);
  }
  if (remainder && size >= remainder) memmove(at(dst + size - remainder), at(src + size - remainder), remainder);
}

/* The fills of HIP 6: work-item id writes the pattern (pattern_size
 * elements of width w) at element offset + id * pattern_size, then every
 * next_chunk elements, while that element lies below end_ptr. */
static void fill_end(uint64_t buf, unsigned w, uint64_t pattern, uint32_t ps, uint64_t offset, uint64_t end,
                     uint32_t next, uint64_t grid) {
  if (!buf || !pattern || !ps) return;
  const uint8_t *pat = at(pattern);
  uint64_t chunk = (uint64_t)ps * w;
  if (next == grid * ps) { /* the work-items tile the buffer: one pass */
    for (uint64_t e = offset; buf + e * w < end; e += ps) memcpy(at(buf + e * w), pat, chunk);
    return;
  }
  for (uint64_t id = 0; id < grid; id++)
    for (uint64_t e = offset + id * ps; buf + e * w < end; e += next ? next : UINT64_MAX / 2)
      memcpy(at(buf + e * w), pat, chunk);
}

/* fillBufferAligned of HIP 5: item id writes the pattern at element
 * (id * patternSize + offset), for id < size. */
static void fill_views(uint64_t buf, unsigned w, uint64_t pattern, uint32_t ps, uint64_t offset, uint64_t size) {
  if (!buf || !pattern || !ps) return;
  const uint8_t *pat = at(pattern);
  uint64_t chunk = (uint64_t)ps * w;
  for (uint64_t id = 0; id < size; id++) memcpy(at(buf + (id * ps + offset) * w), pat, chunk);
}

/* Of the views of one buffer a fill gets, the widest non-null one is used. */
static uint64_t widest_view(const struct args *a, unsigned nviews, unsigned *w) {
  for (unsigned i = nviews; i-- > 0;)
    if (u64(a, i) || i == 0) {
      *w = 1u << i;
      return u64(a, i);
    }
  return 0;
}

/* copyBufferRect: element (x, y, z) sits at x + rect.z + y * rect.x + z * rect.y. */
static void copy_rect(const struct args *a, unsigned el) {
  uint64_t src = u64(a, 0), dst = u64(a, 1);
  uint64_t sr[3] = {vec(a, 2, 0), vec(a, 2, 1), vec(a, 2, 2)};
  uint64_t dr[3] = {vec(a, 3, 0), vec(a, 3, 1), vec(a, 3, 2)};
  uint64_t sz[3] = {vec(a, 4, 0), vec(a, 4, 1), vec(a, 4, 2)};
  for (uint64_t z = 0; z < sz[2]; z++)
    for (uint64_t y = 0; y < sz[1]; y++) {
      uint64_t s = sr[2] + y * sr[0] + z * sr[1];
      uint64_t d = dr[2] + y * dr[0] + z * dr[1];
      memmove(at(dst + d * el), at(src + s * el), sz[0] * el);
    }
}

/* HIP 7's kernels number work-items as group * workgroup_size + local id:
 * the global id when workgroup_size is the dispatch's, as HIP launches them. */
static bool ids_are_global(const char *name, uint32_t wgsize, const struct vgpu_dispatch_info *d) {
  if (wgsize == d->wg[0]) return true;
  vgpu_error("HIP blit kernel %s: workgroup_size %u differs from the dispatch's %u: not emulated", name, wgsize,
             d->wg[0]);
  return false;
}

static void run(const char *name, enum op op, const struct args *a, const struct vgpu_dispatch_info *d) {
  uint64_t grid = (uint64_t)d->grid[0] * d->grid[1] * d->grid[2];
  switch (op) {
  case COPY_ORIGIN: { /* remain == 8: a byte copy of size bytes; else size-1 dwords + remain bytes */
    uint64_t size = u64(a, 4);
    uint32_t remain = u32(a, 5);
    if (size) memmove(at(u64(a, 1) + u64(a, 3)), at(u64(a, 0) + u64(a, 2)), remain == 8 ? size : (size - 1) * 4 + remain);
    break;
  }
  case COPY_ORIGIN_END:
    copy_end(u64(a, 0) + u64(a, 2), u64(a, 1) + u64(a, 3), u64(a, 4), u32(a, 5), u32(a, 6), u64(a, 7), u32(a, 8), grid);
    break;
  case COPY_END_WG:
    if (!ids_are_global(name, u32(a, 7), d)) break;
    /* fall through */
  case COPY_END:
    copy_end(u64(a, 0), u64(a, 1), u64(a, 2), u32(a, 3), u32(a, 4), u64(a, 5), u32(a, 6), grid);
    break;
  case COPY_ALIGNED: { /* elements of 16 bytes when alignment == 16, else 4; origins in elements */
    uint64_t el = u32(a, 5) == 16 ? 16 : 4;
    memmove(at(u64(a, 1) + u64(a, 3) * el), at(u64(a, 0) + u64(a, 2) * el), u64(a, 4) * el);
    break;
  }
  case FILL_VIEWS: {
    unsigned w;
    uint64_t buf = widest_view(a, 4, &w);
    fill_views(buf, w, u64(a, 4), u32(a, 5), u64(a, 6), u64(a, 7));
    break;
  }
  case FILL_VIEWS_END: {
    unsigned w;
    uint64_t buf = widest_view(a, 5, &w);
    fill_end(buf, w, u64(a, 5), u32(a, 6), u64(a, 7), u64(a, 8), u32(a, 9), grid);
    break;
  }
  case FILL_END_WG:
    if (!ids_are_global(name, u32(a, 6), d)) break;
    /* fall through */
  case FILL_END: {
    uint32_t al = u32(a, 3);
    unsigned w = al == 16 || al == 8 || al == 4 || al == 2 ? al : 1;
    fill_end(u64(a, 0), w, u64(a, 1), u32(a, 2), 0, u64(a, 4), u32(a, 5), grid);
    break;
  }
  case FILL_2D: { /* item (x, y) writes the pattern at element (y * pitch + x + offset) */
    unsigned w;
    uint64_t buf = widest_view(a, 4, &w), pattern = u64(a, 4);
    uint64_t ps = u32(a, 5), off = u64(a, 6), width = u64(a, 7), height = u64(a, 8), pitch = u64(a, 9);
    if (!buf || !pattern || !ps) break;
    for (uint64_t y = 0; y < height; y++)
      for (uint64_t x = 0; x < width; x++) memcpy(at(buf + (y * pitch + x + off) * w), at(pattern), ps * w);
    break;
  }
  case COPY_RECT: copy_rect(a, 1); break;
  case COPY_RECT_ALIGNED: copy_rect(a, 4); break;
  case STREAM_WRITE: /* the 64-bit pointer when given, else the 32-bit one */
    if (u64(a, 1)) *(volatile uint64_t *)at(u64(a, 1)) = u64(a, 2);
    else if (u64(a, 0)) *(volatile uint32_t *)at(u64(a, 0)) = (uint32_t)u64(a, 2);
    break;
  case NO_MEMORY: break;
  }
}

const char *vgpu_rocclr_blit(const struct vgpu_kernel *k, void *kernarg, const struct vgpu_dispatch_info *d) {
  if (strncmp(k->name, "__amd_rocclr_", 13)) return NULL;
  const char *name = k->name + 13;
  const struct signature *sig = NULL;
  for (size_t i = 0; i < sizeof signatures / sizeof signatures[0]; i++) {
    if (strcmp(signatures[i].kernel, name)) continue;
    /* Without metadata (code object v2), assume HIP 5's layout: the first listed. */
    if (!k->has_args || k->nargs == signatures[i].nargs) {
      sig = &signatures[i];
      break;
    }
  }
  if (!sig) {
    vgpu_error("HIP blit kernel %s (%u arguments) is not emulated: it moves no data", k->name, k->nargs);
    return NULL;
  }
  struct args a = {.ka = kernarg};
  uint32_t off = 0;
  for (unsigned i = 0; i < sig->nargs; i++) {
    uint32_t sz = sig->size[i];
    off = (off + sz - 1) / sz * sz;
    a.off[i] = k->has_args ? k->args[i].offset : off;
    if (k->has_args && k->args[i].size != sz) {
      vgpu_error("HIP blit kernel %s: argument %u is %u bytes, expected %u: not emulated", k->name, i,
                 k->args[i].size, sz);
      return NULL;
    }
    off += sz;
  }
  run(k->name, sig->op, &a, d);
  return k->name;
}
