# The virtual GPU: build/vgpu/librocprof-go-vgpu.so, a plain-C LD_PRELOAD
# library that plays the kernel's side of any ROCm runtime (/dev/kfd, the
# render nodes, the KFD sysfs topology). See docs/virtual-gpu.md.
VGPU_DIR     := $(BUILD)/vgpu
VGPU_LIB     := $(VGPU_DIR)/librocprof-go-vgpu.so
VGPU_SRCS    := $(sort $(wildcard vgpu/src/*.c))
VGPU_HDRS    := $(wildcard vgpu/src/*.h vgpu/src/compat/*/*.h)
VGPU_CFLAGS  := -std=gnu11 -O2 -g -fPIC -fvisibility=hidden -Wall -Wextra -Werror -Wno-unused-parameter \
                -I/usr/include/hsa -Ivgpu/src/compat -pthread
VGPU_LDFLAGS := -shared -Wl,-soname,librocprof-go-vgpu.so -Wl,--version-script=vgpu/src/vgpu.map \
                -Wl,-z,defs -pthread -ldl

NATIVE_LIBS  += $(VGPU_LIB)
PAYLOAD      += $(VGPU_LIB)

# Linked to a temporary name and renamed, so programs running on the old
# library (tests, soaks) never map a half-written file.
$(VGPU_LIB): $(VGPU_SRCS) $(VGPU_HDRS) vgpu/src/vgpu.map mk/vgpu.mk
	@mkdir -p $(VGPU_DIR)
	$(CC) $(VGPU_CFLAGS) -o $@.tmp $(VGPU_SRCS) $(VGPU_LDFLAGS)
	mv -f $@.tmp $@

.PHONY: vgpu
vgpu: $(VGPU_LIB)

# Test helpers (not shipped): raw-HSA drivers for the golden PMC packets and
# the PM4 path, a minimal HSA_TOOLS_LIB tool, a KFD-event driver on the real
# ROCm 5.2 thunk, and the standalone PM4 interpreter.
VGPU_TEST_DIR   := $(BUILD)/vgpu-tests
VGPU_TEST_BINS  := $(VGPU_TEST_DIR)/pmc_golden $(VGPU_TEST_DIR)/pm4_ib $(VGPU_TEST_DIR)/kfd_events \
                   $(VGPU_TEST_DIR)/pm4_standalone $(VGPU_TEST_DIR)/pcs_ioctl $(VGPU_TEST_DIR)/libvgpu_testtool.so
TEST_PREREQS    += $(VGPU_TEST_BINS)

$(VGPU_TEST_DIR)/%: vgpu/testdriver/%.c vgpu/testdriver/hsa_util.h
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -lhsa-runtime64 -pthread

# The thunk's event calls, through Debian's libhsakmt.so.1 (5.2.3) onto the
# emulated KFD (run with the virtual GPU preloaded).
$(VGPU_TEST_DIR)/kfd_events: vgpu/testdriver/kfd_events.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -lhsakmt -pthread

# PC sampling's ioctl straight on the emulated /dev/kfd (no ROCm library).
$(VGPU_TEST_DIR)/pcs_ioctl: vgpu/testdriver/pcs_ioctl.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $<

# Linked against the virtual GPU itself, which exports the standalone PM4
# interpreter's test hooks.
$(VGPU_TEST_DIR)/pm4_standalone: vgpu/testdriver/pm4_standalone.c $(VGPU_LIB)
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -L$(VGPU_DIR) -l:librocprof-go-vgpu.so -Wl,-rpath,$(VGPU_DIR)

$(VGPU_TEST_DIR)/libvgpu_testtool.so: vgpu/testtool/tool.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -Wall -fPIC -shared -DAMD_INTERNAL_BUILD -I/usr/include/hsa -o $@ $<

# Outside CI: the multi-stream app 1,000 times per runtime of the ROCm matrix
# (the host's 5.2 and the roots), each run under a 60 s limit; reports the
# runs, failures and hangs (a run over the limit) per runtime.
SOAK_RUNS ?= 1000
.PHONY: soak
soak: $(VGPU_LIB) $(TESTAPPS_DIR)/multistream rocm-testapps
	@bad=0; \
	for rt in 5.2 $(ROCM_NAMES); do \
	  if [ $$rt = 5.2 ]; then app=$(TESTAPPS_DIR)/multistream; wrap=""; \
	  else app=$(ROCM_DIR)/$$rt-apps/multistream; wrap="$(ROCM_ROOT_SH) run $(ROCM_DIR)/$$rt --"; fi; \
	  ok=0; fail=0; hang=0; \
	  for i in $$(seq 1 $(SOAK_RUNS)); do \
	    LD_PRELOAD=$(VGPU_LIB) timeout 60 $$wrap $$app >/dev/null 2>&1; rc=$$?; \
	    if [ $$rc = 0 ]; then ok=$$((ok+1)); elif [ $$rc = 124 ]; then hang=$$((hang+1)); \
	    else fail=$$((fail+1)); echo "soak: ROCm $$rt run $$i failed with exit code $$rc"; fi; \
	    [ $$((i % 250)) = 0 ] && echo "soak: ROCm $$rt $$i/$(SOAK_RUNS) runs, ok=$$ok failed=$$fail hangs=$$hang"; \
	  done; \
	  echo "soak: ROCm $$rt runs=$(SOAK_RUNS) ok=$$ok failed=$$fail hangs=$$hang"; \
	  [ $$fail = 0 ] && [ $$hang = 0 ] || bad=1; \
	done; \
	[ $$bad = 0 ]
