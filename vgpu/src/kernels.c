/* Kernel identification and emulation. The virtual GPU runs no ISA, but the
 * runtimes' own copy/fill kernels must move real data, and profilers want
 * kernel names. Names come from the code object's dynamic symbol table in
 * the memory ROCR loaded it into (the "<name>.kd" symbol whose address is the
 * kernel_object), found by scanning back from the descriptor to the ELF
 * header; ROCR's loader API is never called from a packet thread. */
#define _GNU_SOURCE
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

/* --- name cache ----------------------------------------------------------- */

#define NAME_CACHE 4096
struct name_entry {
  uint64_t ko;
  char *name; /* NULL: looked up, none found */
};
static struct name_entry cache[NAME_CACHE];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Code objects sit in buffers the runtime allocated (GPU address = CPU
 * address), so reading them needs only a bounds check. */
static bool readable(uintptr_t a, uint64_t len) { return vgpu_mem_known(a, len, false); }

/* Looks for kernel_object among the .kd symbols of the ELF image at base. */
static char *name_from_elf(uintptr_t base, uint64_t ko) {
  const Elf64_Ehdr *eh = (const Elf64_Ehdr *)base;
  if (!readable(base, sizeof *eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_machine != EM_AMDGPU)
    return NULL;
  if (!readable(base + eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr))) return NULL;
  const Elf64_Phdr *ph = (const Elf64_Phdr *)(base + eh->e_phoff);
  uint64_t dynv = 0, minv = UINT64_MAX;
  for (unsigned i = 0; i < eh->e_phnum; i++) {
    if (ph[i].p_type == PT_DYNAMIC) dynv = ph[i].p_vaddr;
    if (ph[i].p_type == PT_LOAD && ph[i].p_vaddr < minv) minv = ph[i].p_vaddr;
  }
  if (!dynv || minv == UINT64_MAX) return NULL;
  uintptr_t delta = base - minv; /* load bias */
  uint64_t symtab = 0, strtab = 0, strsz = 0, hash = 0;
  for (const Elf64_Dyn *d = (const Elf64_Dyn *)(dynv + delta); readable((uintptr_t)d, sizeof *d) &&
                                                              d->d_tag != DT_NULL;
       d++) {
    if (d->d_tag == DT_SYMTAB) symtab = d->d_un.d_ptr;
    if (d->d_tag == DT_STRTAB) strtab = d->d_un.d_ptr;
    if (d->d_tag == DT_STRSZ) strsz = d->d_un.d_val;
    if (d->d_tag == DT_HASH) hash = d->d_un.d_ptr;
  }
  if (!symtab || !strtab) return NULL;
  uint64_t nsym;
  if (hash && readable(hash + delta, 8)) nsym = ((const uint32_t *)(hash + delta))[1];
  else if (strtab > symtab) nsym = (strtab - symtab) / sizeof(Elf64_Sym);
  else return NULL;
  if (!readable(symtab + delta, nsym * sizeof(Elf64_Sym)) || !readable(strtab + delta, strsz)) return NULL;
  const Elf64_Sym *sym = (const Elf64_Sym *)(symtab + delta);
  const char *str = (const char *)(strtab + delta);
  for (uint64_t i = 0; i < nsym; i++) {
    if (sym[i].st_value + delta != ko || sym[i].st_name >= strsz) continue;
    const char *n = str + sym[i].st_name;
    size_t len = strnlen(n, strsz - sym[i].st_name);
    if (len > 3 && !strcmp(n + len - 3, ".kd")) len -= 3;
    char *out = malloc(len + 1);
    if (out) {
      memcpy(out, n, len);
      out[len] = 0;
    }
    return out;
  }
  return NULL;
}

static char *lookup(uint64_t ko) {
  uint64_t base, size;
  if (!vgpu_mem_range(ko, &base, &size)) return NULL;
  /* Code objects are loaded page-aligned; the first PT_LOAD holds the ELF header. */
  for (uintptr_t b = ko & ~(uintptr_t)4095; b >= base; b -= 4096) {
    const unsigned char *p = (const unsigned char *)b;
    if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') {
      char *n = name_from_elf(b, ko);
      if (n) return n;
    }
    if (b == base || ko - b > (64u << 20)) break;
  }
  return NULL;
}

const char *vgpu_kernel_name(uint64_t ko) {
  if (!ko) return NULL;
  unsigned h = (unsigned)((ko >> 6) * 0x9E3779B1u) % NAME_CACHE;
  pthread_mutex_lock(&cache_lock);
  for (unsigned i = 0; i < 8; i++) {
    struct name_entry *e = &cache[(h + i) % NAME_CACHE];
    if (e->ko == ko) {
      pthread_mutex_unlock(&cache_lock);
      return e->name;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  char *n = lookup(ko); /* NULL is cached too: a dispatched object is already loaded */
  pthread_mutex_lock(&cache_lock);
  struct name_entry *slot = &cache[h];
  for (unsigned i = 0; i < 8; i++)
    if (!cache[(h + i) % NAME_CACHE].ko) {
      slot = &cache[(h + i) % NAME_CACHE];
      break;
    }
  /* Old names are leaked on eviction: readers may still hold them. */
  slot->ko = ko;
  slot->name = n;
  pthread_mutex_unlock(&cache_lock);
  return n;
}

void vgpu_kernel_names_forget(uintptr_t base, uint64_t size) {
  pthread_mutex_lock(&cache_lock);
  for (unsigned i = 0; i < NAME_CACHE; i++)
    if (cache[i].ko >= base && cache[i].ko - base < size) cache[i].ko = 0; /* name leaked: readers may hold it */
  pthread_mutex_unlock(&cache_lock);
}

/* --- ROCR blit kernels ---------------------------------------------------- */

/* ROCR 5.2.3 assembles its three blit kernels as amd_kernel_code_t objects
 * (entry offset 256). They are told apart by the VGPR/SGPR granules in
 * compute_pgm_rsrc1; kernarg layouts follow BlitKernel::KernelArgs. */
static const char *rocr_blit(const uint8_t *kd, const uint8_t *ka) {
  uint32_t ver;
  int64_t entry;
  uint32_t rsrc1;
  memcpy(&ver, kd, 4);
  memcpy(&entry, kd + 16, 8);
  memcpy(&rsrc1, kd + 48, 4);
  if (entry != 256 || ver > 1) return NULL;
  unsigned vg = rsrc1 & 0x3f, sg = (rsrc1 >> 6) & 0xf;
  uint64_t a[11];
  if (vg == 2 && sg == 3) { /* CopyAligned */
    memcpy(a, ka, sizeof a);
    uint64_t n = a[8] - a[0];
    memmove(vgpu_host(a[1]), vgpu_host(a[0]), n);
    return "rocr_copy_aligned";
  }
  if (vg == 2 && sg == 2) { /* CopyMisaligned */
    memcpy(a, ka, 6 * 8);
    uint64_t n = a[4] - a[0];
    memmove(vgpu_host(a[1]), vgpu_host(a[0]), n);
    return "rocr_copy_misaligned";
  }
  if (vg == 1 && sg == 2) { /* Fill */
    memcpy(a, ka, 3 * 8);
    uint32_t v;
    memcpy(&v, ka + 24, 4);
    uint32_t *p = vgpu_host(a[0]);
    for (uint64_t i = 0; a[0] + 4 * (i + 1) <= a[2]; i++) p[i] = v;
    return "rocr_fill";
  }
  return NULL;
}

const char *vgpu_blit_emulate(uint64_t ko, const char *name, void *kernarg,
                              const struct vgpu_dispatch_info *d) {
  if (!ko || !kernarg) return NULL;
  if (!vgpu_mem_known(ko, 64, true)) return NULL;
  if (name) return vgpu_rocclr_blit(name, kernarg, d);
  return rocr_blit(vgpu_host(ko), kernarg);
}
