/* Kernel identification and emulation. The virtual GPU runs no ISA, but the
 * runtimes' own copy/fill kernels must move real data, and profilers want
 * kernel names. Names come from the code object's dynamic symbol table in
 * the memory ROCR loaded it into (the "<name>.kd" symbol whose address is the
 * kernel_object), found by scanning back from the descriptor to the ELF
 * header; ROCR's loader API is never called from a packet thread. The
 * argument layout of HIP's blit kernels, which changed between HIP
 * versions, comes from the code object's metadata note. */
#define _GNU_SOURCE
#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "vgpu.h"

#ifndef EM_AMDGPU
#define EM_AMDGPU 224
#endif

/* --- kernel info cache --------------------------------------------------------- */

#define INFO_CACHE 4096
struct info_entry {
  uint64_t ko;
  struct vgpu_kernel *info; /* NULL: looked up, nothing found */
};
static struct info_entry cache[INFO_CACHE];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Code objects sit in buffers the runtime allocated (GPU address = CPU
 * address), so reading them needs only a bounds check. */
static bool readable(uintptr_t a, uint64_t len) { return vgpu_mem_known(a, len, false); }

/* --- msgpack, as far as the AMDGPU metadata note needs it ------------------------
 * Code objects v3 and later describe their kernels in a note (owner
 * "AMDGPU", type NT_AMDGPU_METADATA) holding one msgpack map:
 * "amdhsa.kernels" is an array of maps with ".symbol" and ".args" (each
 * with ".offset", ".size", ".value_kind"). */

struct mp {
  const uint8_t *p, *end;
};

static bool mp_take(struct mp *m, size_t n, const uint8_t **out) {
  if ((size_t)(m->end - m->p) < n) return false;
  *out = m->p;
  m->p += n;
  return true;
}

static bool mp_be(struct mp *m, unsigned bytes, uint64_t *v) {
  const uint8_t *b;
  if (!mp_take(m, bytes, &b)) return false;
  *v = 0;
  for (unsigned i = 0; i < bytes; i++) *v = (*v << 8) | b[i];
  return true;
}

/* Container and string headers: returns the element count / length. */
static bool mp_len(struct mp *m, uint8_t fix_lo, uint8_t fix_hi, uint8_t fix_mask, const uint8_t wide[3],
                   uint64_t *n) {
  const uint8_t *t;
  if (!mp_take(m, 1, &t)) return false;
  if (*t >= fix_lo && *t <= fix_hi) {
    *n = *t & fix_mask;
    return true;
  }
  for (unsigned i = 0; i < 3; i++)
    if (wide[i] && *t == wide[i]) return mp_be(m, 1u << i, n);
  return false;
}
static bool mp_map(struct mp *m, uint64_t *n) { return mp_len(m, 0x80, 0x8f, 0x0f, (const uint8_t[3]){0, 0xde, 0xdf}, n); }
static bool mp_array(struct mp *m, uint64_t *n) { return mp_len(m, 0x90, 0x9f, 0x0f, (const uint8_t[3]){0, 0xdc, 0xdd}, n); }
static bool mp_str(struct mp *m, const char **s, uint64_t *n) {
  const uint8_t *b;
  return mp_len(m, 0xa0, 0xbf, 0x1f, (const uint8_t[3]){0xd9, 0xda, 0xdb}, n) && mp_take(m, *n, &b) &&
         (*s = (const char *)b, true);
}
static bool mp_uint(struct mp *m, uint64_t *v) {
  const uint8_t *t;
  if (!mp_take(m, 1, &t)) return false;
  if (*t < 0x80) return *v = *t, true;
  if (*t >= 0xcc && *t <= 0xcf) return mp_be(m, 1u << (*t - 0xcc), v);
  return false;
}

static bool mp_skip(struct mp *m, int depth) {
  const uint8_t *t;
  uint64_t n;
  if (depth > 16 || m->p >= m->end) return false;
  uint8_t c = *m->p;
  if (c <= 0x7f || c >= 0xe0 || c == 0xc0 || c == 0xc2 || c == 0xc3) return mp_take(m, 1, &t);
  if ((c >= 0x80 && c <= 0x8f) || c == 0xde || c == 0xdf) {
    if (!mp_map(m, &n)) return false;
    for (uint64_t i = 0; i < 2 * n; i++)
      if (!mp_skip(m, depth + 1)) return false;
    return true;
  }
  if ((c >= 0x90 && c <= 0x9f) || c == 0xdc || c == 0xdd) {
    if (!mp_array(m, &n)) return false;
    for (uint64_t i = 0; i < n; i++)
      if (!mp_skip(m, depth + 1)) return false;
    return true;
  }
  if ((c >= 0xa0 && c <= 0xbf) || (c >= 0xd9 && c <= 0xdb)) {
    const char *s;
    return mp_str(m, &s, &n);
  }
  mp_take(m, 1, &t);
  switch (c) {
  case 0xc4: case 0xc5: case 0xc6: /* bin */
    return mp_be(m, 1u << (c - 0xc4), &n) && mp_take(m, n, &t);
  case 0xc7: case 0xc8: case 0xc9: /* ext */
    return mp_be(m, 1u << (c - 0xc7), &n) && mp_take(m, n + 1, &t);
  case 0xca: return mp_take(m, 4, &t);
  case 0xcb: return mp_take(m, 8, &t);
  case 0xcc: case 0xd0: return mp_take(m, 1, &t);
  case 0xcd: case 0xd1: return mp_take(m, 2, &t);
  case 0xce: case 0xd2: return mp_take(m, 4, &t);
  case 0xcf: case 0xd3: return mp_take(m, 8, &t);
  case 0xd4: return mp_take(m, 2, &t); /* fixext 1..16 */
  case 0xd5: return mp_take(m, 3, &t);
  case 0xd6: return mp_take(m, 5, &t);
  case 0xd7: return mp_take(m, 9, &t);
  case 0xd8: return mp_take(m, 17, &t);
  default: return false;
  }
}

static bool mp_key_is(const char *s, uint64_t n, const char *want) { return n == strlen(want) && !memcmp(s, want, n); }

/* One ".args" entry: explicit arguments only (hidden ones follow them). */
static bool parse_arg(struct mp *m, struct vgpu_kernel *k) {
  uint64_t n, off = UINT64_MAX, size = 0;
  bool hidden = false;
  if (!mp_map(m, &n)) return false;
  for (uint64_t i = 0; i < n; i++) {
    const char *key, *val;
    uint64_t kn, vn;
    if (!mp_str(m, &key, &kn)) return false;
    if (mp_key_is(key, kn, ".offset")) {
      if (!mp_uint(m, &off)) return false;
    } else if (mp_key_is(key, kn, ".size")) {
      if (!mp_uint(m, &size)) return false;
    } else if (mp_key_is(key, kn, ".value_kind")) {
      if (!mp_str(m, &val, &vn)) return false;
      hidden = vn >= 7 && !memcmp(val, "hidden_", 7);
    } else if (!mp_skip(m, 0)) {
      return false;
    }
  }
  if (!hidden && off != UINT64_MAX && k->nargs < VGPU_KERNEL_MAX_ARGS) {
    k->args[k->nargs].offset = (uint32_t)off;
    k->args[k->nargs].size = (uint32_t)size;
    k->nargs++;
  }
  return true;
}

/* Fills k->args from the kernel map whose ".symbol" is sym. */
static bool parse_kernels(struct mp *m, const char *sym, struct vgpu_kernel *k) {
  uint64_t nk;
  if (!mp_array(m, &nk)) return false;
  for (uint64_t i = 0; i < nk; i++) {
    struct mp save = *m, args = {0};
    uint64_t n;
    bool match = false;
    if (!mp_map(m, &n)) return false;
    for (uint64_t j = 0; j < n; j++) {
      const char *key, *val;
      uint64_t kn, vn;
      if (!mp_str(m, &key, &kn)) return false;
      if (mp_key_is(key, kn, ".symbol")) {
        if (!mp_str(m, &val, &vn)) return false;
        match = mp_key_is(val, vn, sym);
      } else if (mp_key_is(key, kn, ".args")) {
        args = *m;
        if (!mp_skip(m, 0)) return false;
      } else if (!mp_skip(m, 0)) {
        return false;
      }
    }
    (void)save;
    if (match && args.p) {
      uint64_t na;
      if (!mp_array(&args, &na)) return false;
      for (uint64_t a = 0; a < na; a++)
        if (!parse_arg(&args, k)) return false;
      k->has_args = true;
      return true;
    }
  }
  return false;
}

static void args_from_note(const uint8_t *note, uint64_t len, const char *sym, struct vgpu_kernel *k) {
  uint64_t o = 0;
  while (o + 12 <= len) {
    uint32_t namesz, descsz, type;
    memcpy(&namesz, note + o, 4);
    memcpy(&descsz, note + o + 4, 4);
    memcpy(&type, note + o + 8, 4);
    uint64_t name_off = o + 12, desc_off = name_off + ((namesz + 3) & ~3u);
    if (desc_off + descsz > len) return;
    if (type == 32 /* NT_AMDGPU_METADATA */ && namesz == 7 && !memcmp(note + name_off, "AMDGPU", 7)) {
      struct mp m = {note + desc_off, note + desc_off + descsz};
      uint64_t n;
      if (!mp_map(&m, &n)) return;
      for (uint64_t i = 0; i < n; i++) {
        const char *key;
        uint64_t kn;
        if (!mp_str(&m, &key, &kn)) return;
        if (mp_key_is(key, kn, "amdhsa.kernels")) {
          parse_kernels(&m, sym, k);
          return;
        }
        if (!mp_skip(&m, 0)) return;
      }
    }
    o = desc_off + ((descsz + 3) & ~3u);
  }
}

/* Length in bytes of the gfx9 (GCN5/CDNA) instruction at w (enough of the
 * encodings to walk a kernel's instruction stream: 32- or 64-bit forms, a
 * 32-bit literal when a scalar/vector source is 255, SDWA/DPP words). */
static unsigned gfx9_insn_len(const uint32_t *w) {
  uint32_t x = w[0];
  if ((x >> 31) == 0) { /* VOP2 */
    unsigned op = (x >> 25) & 0x3f, src0 = x & 0x1ff;
    if (op == 23 || op == 24 || op == 36 || op == 37) return 8; /* madmk/madak (f32, f16): literal */
    return (src0 == 255 || src0 == 0xf9 || src0 == 0xfa) ? 8 : 4;
  }
  if ((x >> 25) == 0x3f || (x >> 25) == 0x3e) { /* VOP1 0111111, VOPC 0111110 */
    unsigned src0 = x & 0x1ff;
    return (src0 == 255 || src0 == 0xf9 || src0 == 0xfa) ? 8 : 4;
  }
  unsigned top9 = x >> 23, top6 = x >> 26, top4 = x >> 28;
  if (top9 == 0x17d || top9 == 0x17e) { /* SOP1, SOPC */
    unsigned s0 = x & 0xff, s1 = (x >> 8) & 0xff;
    return (s0 == 255 || (top9 == 0x17e && s1 == 255)) ? 8 : 4;
  }
  if (top9 == 0x17f) return 4;                  /* SOPP */
  if (top4 == 0xb) return ((x >> 23) & 0x1f) == 20 ? 8 : 4; /* SOPK (s_setreg_imm32_b32: literal) */
  if ((x >> 30) == 2) {                          /* SOP2 */
    unsigned s0 = x & 0xff, s1 = (x >> 8) & 0xff;
    return (s0 == 255 || s1 == 255) ? 8 : 4;
  }
  if (top6 == 0x35) return 4; /* VINTRP */
  return 8;                   /* SMEM, VOP3(P), DS, FLAT, MUBUF, MTBUF, MIMG, EXP */
}

#define MAX_SAMPLED_INSNS 4096

/* Fills k's code range and instruction offsets from the function symbol at
 * the descriptor's entry (ROCR's own kernels have none: no samples). */
static void code_of(struct vgpu_kernel *k, uint64_t ko, const Elf64_Sym *sym, uint64_t nsym, uintptr_t delta) {
  int64_t off;
  memcpy(&off, (const void *)(uintptr_t)(ko + 16), 8);
  k->entry = ko + (uint64_t)off;
  for (uint64_t i = 0; i < nsym; i++)
    if (sym[i].st_value + delta == k->entry && ELF64_ST_TYPE(sym[i].st_info) == STT_FUNC && sym[i].st_size) {
      k->code_size = sym[i].st_size;
      break;
    }
  if (!k->code_size || !readable(k->entry, k->code_size)) return;
  uint64_t n = k->code_size / 4 < MAX_SAMPLED_INSNS ? k->code_size / 4 : MAX_SAMPLED_INSNS;
  k->insn = malloc(n * sizeof *k->insn);
  if (!k->insn) return;
  const uint8_t *code = (const uint8_t *)(uintptr_t)k->entry;
  for (uint64_t o = 0; o + 4 <= k->code_size && k->ninsn < n;) {
    uint32_t w[2] = {0, 0};
    memcpy(w, code + o, o + 8 <= k->code_size ? 8 : 4);
    k->insn[k->ninsn++] = (uint32_t)o;
    o += gfx9_insn_len(w);
  }
}

/* Looks for kernel_object among the .kd symbols of the ELF image at base;
 * for the runtimes' blit kernels, also reads their argument layout. */
static struct vgpu_kernel *info_from_elf(uintptr_t base, uint64_t ko) {
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
    size_t full = strnlen(n, strsz - sym[i].st_name), len = full;
    if (len > 3 && !strcmp(n + len - 3, ".kd")) len -= 3;
    struct vgpu_kernel *k = calloc(1, sizeof *k);
    char *name = malloc(len + 1), *symname = malloc(full + 1);
    if (!k || !name || !symname) {
      free(k), free(name), free(symname);
      return NULL;
    }
    memcpy(name, n, len);
    name[len] = 0;
    memcpy(symname, n, full);
    symname[full] = 0;
    k->name = name;
    if (vgpu_cfg.arch && vgpu_cfg.arch->gfx_level == 9) code_of(k, ko, sym, nsym, delta);
    /* Argument layouts matter only to the blit kernels emulated here. */
    if (!strncmp(name, "__amd_rocclr_", 13))
      for (unsigned p = 0; p < eh->e_phnum; p++)
        if (ph[p].p_type == PT_NOTE && readable(ph[p].p_vaddr + delta, ph[p].p_memsz))
          args_from_note((const uint8_t *)(ph[p].p_vaddr + delta), ph[p].p_memsz, symname, k);
    free(symname);
    return k;
  }
  return NULL;
}

static struct vgpu_kernel *lookup(uint64_t ko) {
  uint64_t base, size;
  if (!vgpu_mem_range(ko, &base, &size)) return NULL;
  /* Code objects are loaded page-aligned; the first PT_LOAD holds the ELF header. */
  for (uintptr_t b = ko & ~(uintptr_t)4095; b >= base; b -= 4096) {
    const unsigned char *p = (const unsigned char *)b;
    if (p[0] == 0x7f && p[1] == 'E' && p[2] == 'L' && p[3] == 'F') {
      struct vgpu_kernel *k = info_from_elf(b, ko);
      if (k) return k;
    }
    if (b == base || ko - b > (64u << 20)) break;
  }
  return NULL;
}

const struct vgpu_kernel *vgpu_kernel_info(uint64_t ko) {
  if (!ko) return NULL;
  unsigned h = (unsigned)((ko >> 6) * 0x9E3779B1u) % INFO_CACHE;
  pthread_mutex_lock(&cache_lock);
  for (unsigned i = 0; i < 8; i++) {
    struct info_entry *e = &cache[(h + i) % INFO_CACHE];
    if (e->ko == ko) {
      pthread_mutex_unlock(&cache_lock);
      return e->info;
    }
  }
  pthread_mutex_unlock(&cache_lock);
  struct vgpu_kernel *k = lookup(ko); /* NULL is cached too: a dispatched object is already loaded */
  pthread_mutex_lock(&cache_lock);
  struct info_entry *slot = &cache[h];
  for (unsigned i = 0; i < 8; i++)
    if (!cache[(h + i) % INFO_CACHE].ko) {
      slot = &cache[(h + i) % INFO_CACHE];
      break;
    }
  /* Old entries are leaked on eviction: readers may still hold them. */
  slot->ko = ko;
  slot->info = k;
  pthread_mutex_unlock(&cache_lock);
  return k;
}

const char *vgpu_kernel_name(uint64_t ko) {
  const struct vgpu_kernel *k = vgpu_kernel_info(ko);
  return k ? k->name : NULL;
}

void vgpu_kernel_names_forget(uintptr_t base, uint64_t size) {
  pthread_mutex_lock(&cache_lock);
  for (unsigned i = 0; i < INFO_CACHE; i++)
    if (cache[i].ko >= base && cache[i].ko - base < size) cache[i].ko = 0; /* entry leaked: readers may hold it */
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
    /* ROCR 6.4+ fills its PC-sampling buffers (DmaFill) with a byte count
     * where the fill takes dwords: four times the buffer. A GPU write past
     * the buffer's mapping goes nowhere; here it stops at the buffer's end. */
    uint64_t base, size, end = a[2];
    if (vgpu_mem_range(a[0], &base, &size) && end > base + size) {
      vgpu_logf("{\"type\":\"fill_clipped\",\"pid\":%d,\"dst\":%llu,\"end\":%llu,\"buffer_end\":%llu}",
                (int)getpid(), (unsigned long long)a[0], (unsigned long long)end, (unsigned long long)(base + size));
      end = base + size;
    }
    uint32_t *p = vgpu_host(a[0]);
    for (uint64_t i = 0; a[0] + 4 * (i + 1) <= end; i++) p[i] = v;
    return "rocr_fill";
  }
  return NULL;
}

const char *vgpu_blit_emulate(uint64_t ko, const struct vgpu_kernel *k, void *kernarg,
                              const struct vgpu_dispatch_info *d) {
  if (!ko || !kernarg) return NULL;
  if (!vgpu_mem_known(ko, 64, true)) return NULL;
  if (k) return vgpu_rocclr_blit(k, kernarg, d);
  return rocr_blit(vgpu_host(ko), kernarg);
}
