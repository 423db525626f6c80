/* Runs an AQLprofile golden PMC set through the virtual GPU's standalone PM4
 * interpreter (no HSA runtime), for architectures ROCR 5.2.3 cannot emulate
 * such as the 8-XCC gfx942: the golden start packet, a dispatch of GRID
 * work-items in workgroups of WG, then the remaining packets; prints the
 * output buffer as one hex u64 per line.
 * usage: pm4_standalone LABEL AQL_BIN CMDBUF_BIN CMDBUF_ADDR OUT_ADDR OUT_SIZE GRID WG */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct vgpu_test_pm4;
struct vgpu_test_pm4 *vgpu_test_pm4_new(const char *label);
int vgpu_test_pm4_run(struct vgpu_test_pm4 *t, const uint32_t *ib, uint32_t ndw);
void vgpu_test_pm4_dispatch(struct vgpu_test_pm4 *t, uint32_t grid, uint32_t wg);

static void *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    exit(2);
  }
  fseek(f, 0, SEEK_END);
  *n = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  void *p = malloc(*n);
  if (fread(p, 1, *n, f) != *n) exit(2);
  fclose(f);
  return p;
}

int main(int argc, char **argv) {
  if (argc != 9) {
    fprintf(stderr, "usage: %s LABEL AQL_BIN CMDBUF_BIN CMDBUF_ADDR OUT_ADDR OUT_SIZE GRID WG\n", argv[0]);
    return 2;
  }
  struct vgpu_test_pm4 *t = vgpu_test_pm4_new(argv[1]);
  if (!t) {
    fprintf(stderr, "unknown architecture label %s\n", argv[1]);
    return 2;
  }
  size_t naql, ncmd;
  uint32_t *aql = slurp(argv[2], &naql);
  uint8_t *cmd = slurp(argv[3], &ncmd);
  uint64_t cmd_addr = strtoull(argv[4], NULL, 0), out_addr = strtoull(argv[5], NULL, 0);
  size_t out_size = strtoull(argv[6], NULL, 0);
  uint64_t lo = (out_addr < cmd_addr ? out_addr : cmd_addr) & ~0xfffull;
  uint64_t hi = out_addr + out_size > cmd_addr + ncmd ? out_addr + out_size : cmd_addr + ncmd;
  hi = (hi + 0xfff) & ~0xfffull;
  if (mmap((void *)lo, hi - lo, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) !=
      (void *)lo) {
    perror("mmap at the golden arena address");
    return 2;
  }
  memcpy((void *)cmd_addr, cmd, ncmd);
  memset((void *)out_addr, 0xee, out_size);
  for (size_t k = 0; k < naql / 64; k++) {
    /* Dwords 1-4 of an AMD PM4-IB vendor packet are an INDIRECT_BUFFER. */
    vgpu_test_pm4_run(t, aql + 16 * k + 1, 4);
    if (k == 0) vgpu_test_pm4_dispatch(t, (uint32_t)strtoul(argv[7], NULL, 0), (uint32_t)strtoul(argv[8], NULL, 0));
  }
  for (size_t i = 0; i + 8 <= out_size; i += 8) printf("0x%016llx\n", (unsigned long long)*(uint64_t *)(out_addr + i));
  return 0;
}
