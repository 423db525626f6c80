/* HIP 5.2's own blit kernels (ROCclr "__amd_rocclr_*"), which implement
 * hipMemset and device-to-device hipMemcpy. Kernarg layouts follow the
 * OpenCL signatures embedded in libamdhip64.so.5 (pointers and ulongs 8 bytes,
 * ulong4 32-byte aligned); the per-work-item behaviour was read from the
 * __amd_copyBuffer* / __amd_fillBuffer* functions in Debian's
 * rocm-device-libs opencl.bc. Bounds come from the size arguments, never
 * from the grid, exactly as the kernels' own range checks do. */
#include <string.h>

#include "vgpu.h"

static uint64_t arg64(const uint8_t *ka, unsigned off) {
  uint64_t v;
  memcpy(&v, ka + off, 8);
  return v;
}
/* A pointer argument: a GPU address, as the kernel would dereference it. */
static uint8_t *argptr(const uint8_t *ka, unsigned off) { return arg64(ka, off) ? vgpu_host(arg64(ka, off)) : NULL; }

static uint32_t arg32(const uint8_t *ka, unsigned off) {
  uint32_t v;
  memcpy(&v, ka + off, 4);
  return v;
}

/* copyBuffer(uchar *src, uchar *dst, ulong srcOrigin, ulong dstOrigin, ulong size, uint remain):
 * remain == 8 means a byte copy of size bytes; otherwise size-1 dwords plus
 * remain trailing bytes. Origins are in bytes. */
static void copy_buffer(const uint8_t *ka) {
  uint8_t *src = vgpu_host(arg64(ka, 0) + arg64(ka, 16));
  uint8_t *dst = vgpu_host(arg64(ka, 8) + arg64(ka, 24));
  uint64_t size = arg64(ka, 32);
  uint32_t remain = arg32(ka, 40);
  if (!size) return;
  uint64_t bytes = remain == 8 ? size : (size - 1) * 4 + remain;
  memmove(dst, src, bytes);
}

/* copyBufferAligned(uint *src, uint *dst, ulong srcOrigin, ulong dstOrigin, ulong size, uint alignment):
 * elements are 16 bytes when alignment == 16, else 4; origins in elements. */
static void copy_buffer_aligned(const uint8_t *ka) {
  uint64_t el = arg32(ka, 40) == 16 ? 16 : 4;
  uint8_t *src = vgpu_host(arg64(ka, 0) + arg64(ka, 16) * el);
  uint8_t *dst = vgpu_host(arg64(ka, 8) + arg64(ka, 24) * el);
  memmove(dst, src, arg64(ka, 32) * el);
}

/* The fill kernels get four views of one buffer and use the widest non-null
 * one; the pattern has patternSize elements of that width. */
static unsigned fill_width(const uint8_t *ka, uint8_t **buf) {
  static const unsigned widths[4] = {8, 4, 2, 1};
  static const unsigned offs[4] = {24, 16, 8, 0};
  for (int i = 0; i < 4; i++) {
    uint64_t p = arg64(ka, offs[i]);
    if (p || i == 3) {
      *buf = p ? vgpu_host(p) : NULL;
      return widths[i];
    }
  }
  return 1;
}

/* fillBufferAligned(..., uchar *pattern, uint patternSize, ulong offset, ulong size):
 * item id writes the pattern at element (id * patternSize + offset). */
static void fill_buffer(const uint8_t *ka) {
  uint8_t *buf;
  unsigned w = fill_width(ka, &buf);
  const uint8_t *pat = argptr(ka, 32);
  uint64_t ps = arg32(ka, 40), off = arg64(ka, 48), size = arg64(ka, 56);
  if (!buf || !pat || !ps) return;
  uint64_t chunk = ps * w;
  uint8_t *p = buf + off * w;
  for (uint64_t id = 0; id < size; id++) memcpy(p + id * chunk, pat, chunk);
}

/* fillBufferAligned2D(..., pattern, patternSize, offset, width, height, pitch):
 * item (x, y) writes the pattern at element (y * pitch + x + offset). */
static void fill_buffer_2d(const uint8_t *ka) {
  uint8_t *buf;
  unsigned w = fill_width(ka, &buf);
  const uint8_t *pat = argptr(ka, 32);
  uint64_t ps = arg32(ka, 40), off = arg64(ka, 48), width = arg64(ka, 56), height = arg64(ka, 64),
           pitch = arg64(ka, 72);
  if (!buf || !pat || !ps) return;
  for (uint64_t y = 0; y < height; y++)
    for (uint64_t x = 0; x < width; x++) memcpy(buf + (y * pitch + x + off) * w, pat, ps * w);
}

/* copyBufferRect(src, dst, ulong4 srcRect, ulong4 dstRect, ulong4 size):
 * element (x, y, z) sits at x + rect.z + y * rect.x + z * rect.y. */
static void copy_rect(const uint8_t *ka, unsigned el) {
  uint8_t *src = argptr(ka, 0);
  uint8_t *dst = argptr(ka, 8);
  uint64_t sr[3] = {arg64(ka, 32), arg64(ka, 40), arg64(ka, 48)};
  uint64_t dr[3] = {arg64(ka, 64), arg64(ka, 72), arg64(ka, 80)};
  uint64_t sz[3] = {arg64(ka, 96), arg64(ka, 104), arg64(ka, 112)};
  for (uint64_t z = 0; z < sz[2]; z++)
    for (uint64_t y = 0; y < sz[1]; y++) {
      uint64_t s = sr[2] + y * sr[0] + z * sr[1];
      uint64_t d = dr[2] + y * dr[0] + z * dr[1];
      memmove(dst + d * el, src + s * el, sz[0] * el);
    }
}

const char *vgpu_rocclr_blit(const char *name, void *kernarg, const struct vgpu_dispatch_info *d) {
  (void)d;
  const uint8_t *ka = kernarg;
  if (strncmp(name, "__amd_rocclr_", 13)) return NULL;
  const char *k = name + 13;
  if (!strcmp(k, "copyBuffer")) copy_buffer(ka);
  else if (!strcmp(k, "copyBufferAligned")) copy_buffer_aligned(ka);
  else if (!strcmp(k, "fillBufferAligned")) fill_buffer(ka);
  else if (!strcmp(k, "fillBufferAligned2D")) fill_buffer_2d(ka);
  else if (!strcmp(k, "copyBufferRect")) copy_rect(ka, 1);
  else if (!strcmp(k, "copyBufferRectAligned")) copy_rect(ka, 4);
  else if (!strcmp(k, "gwsInit")) return NULL; /* initialises GWS barriers: no memory to touch */
  else {
    vgpu_error("ROCclr blit kernel %s is not emulated: it moves no data", name);
    return NULL;
  }
  return name;
}
