# The virtual GPU: build/vgpu/libhsakmt.so.1, a plain-C replacement of the
# ROCT thunk (see docs/virtual-gpu.md). Built against Debian's hsakmt.h.
VGPU_DIR     := $(BUILD)/vgpu
VGPU_LIB     := $(VGPU_DIR)/libhsakmt.so.1
VGPU_SRCS    := $(sort $(wildcard vgpu/src/*.c))
VGPU_HDRS    := $(wildcard vgpu/src/*.h)
VGPU_CFLAGS  := -std=gnu11 -O2 -g -fPIC -Wall -Wextra -Werror -Wno-unused-parameter \
                -I/usr/include/hsa -pthread
VGPU_LDFLAGS := -shared -Wl,-soname,libhsakmt.so.1 -Wl,--version-script=vgpu/src/libhsakmt.map \
                -Wl,-z,defs -pthread

NATIVE_LIBS  += $(VGPU_LIB)
PAYLOAD      += $(VGPU_LIB)

# Linked to a temporary name and renamed, so programs running on the old
# library (tests, soaks) never map a half-written file.
$(VGPU_LIB): $(VGPU_SRCS) $(VGPU_HDRS) vgpu/src/libhsakmt.map mk/vgpu.mk
	@mkdir -p $(VGPU_DIR)
	$(CC) $(VGPU_CFLAGS) -o $@.tmp $(VGPU_SRCS) $(VGPU_LDFLAGS)
	mv -f $@.tmp $@

.PHONY: vgpu
vgpu: $(VGPU_LIB)

# Test helpers (not shipped): a raw-HSA driver for the golden PMC packets, a
# concurrency driver and a minimal HSA_TOOLS_LIB tool.
VGPU_TEST_DIR   := $(BUILD)/vgpu-tests
VGPU_TEST_BINS  := $(VGPU_TEST_DIR)/pmc_golden $(VGPU_TEST_DIR)/pm4_ib $(VGPU_TEST_DIR)/kfd_events $(VGPU_TEST_DIR)/pm4_standalone $(VGPU_TEST_DIR)/libvgpu_testtool.so
TEST_PREREQS    += $(VGPU_TEST_BINS)

$(VGPU_TEST_DIR)/%: vgpu/testdriver/%.c vgpu/testdriver/hsa_util.h
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -lhsa-runtime64 -pthread

# Linked against the virtual GPU itself (no HSA runtime) to test the thunk API
# and the standalone PM4 interpreter.
$(VGPU_TEST_DIR)/pm4_standalone: vgpu/testdriver/pm4_standalone.c $(VGPU_LIB)
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -L$(VGPU_DIR) -l:libhsakmt.so.1

$(VGPU_TEST_DIR)/kfd_events: vgpu/testdriver/kfd_events.c $(VGPU_LIB)
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -L$(VGPU_DIR) -l:libhsakmt.so.1 -pthread

$(VGPU_TEST_DIR)/libvgpu_testtool.so: vgpu/testtool/tool.cpp
	@mkdir -p $(@D)
	$(CXX) -std=c++17 -O2 -Wall -fPIC -shared -DAMD_INTERNAL_BUILD -I/usr/include/hsa -o $@ $<

# Outside CI: the multi-stream app 1,000 times on the virtual GPU; reports
# the runs, failures and hangs (a run over 60 s counts as a hang).
SOAK_RUNS ?= 1000
.PHONY: soak
soak: $(VGPU_LIB) $(TESTAPPS_DIR)/multistream
	@ok=0; fail=0; hang=0; \
	for i in $$(seq 1 $(SOAK_RUNS)); do \
	  LD_LIBRARY_PATH=$(VGPU_DIR) timeout 60 $(TESTAPPS_DIR)/multistream >/dev/null 2>&1; rc=$$?; \
	  if [ $$rc = 0 ]; then ok=$$((ok+1)); elif [ $$rc = 124 ]; then hang=$$((hang+1)); \
	  else fail=$$((fail+1)); echo "soak: run $$i failed with exit code $$rc"; fi; \
	  [ $$((i % 50)) = 0 ] && echo "soak: $$i/$(SOAK_RUNS) runs, ok=$$ok failed=$$fail hangs=$$hang"; \
	done; \
	echo "soak: runs=$(SOAK_RUNS) ok=$$ok failed=$$fail hangs=$$hang"; \
	[ $$fail = 0 ] && [ $$hang = 0 ]
