# Sample apps for the end-to-end tests and benchmarks (testdata/apps), built
# with hipcc for the virtual GPU's default architecture into build/testdata,
# plus builds for the other emulated architectures into build/testdata/<arch>.
HIPCC            ?= hipcc
TESTAPPS_DIR     := $(BUILD)/testdata
TESTAPPS_HIP     := devices features idle multistream perfgate docapp memcheck multithread launch_threads abort segfault fork exec tiny_kernels callrate scratch_kernels vmem teardown_calls
TESTAPPS_OTHER   := gfx908/multistream gfx908/memcheck gfx908/devices gfx906/devices gfx906/memcheck \
                    gfx900/devices gfx900/memcheck gfx1030/devices gfx1030/memcheck
TESTAPPS_BINS    := $(addprefix $(TESTAPPS_DIR)/,$(TESTAPPS_HIP) hsa_queues hsa_late_wakeup hsa_crash hsa_pcs realtime_marks $(TESTAPPS_OTHER)) \
                    $(TESTAPPS_DIR)/module_kernels.co
TESTAPPS_HIPFLAGS := -O2 -std=c++17

TEST_PREREQS += $(TESTAPPS_BINS)

$(TESTAPPS_DIR)/%: testdata/apps/%.cpp testdata/apps/common.h
	@mkdir -p $(@D)
	$(HIPCC) --offload-arch=gfx90a $(TESTAPPS_HIPFLAGS) -o $@ $<

define testapps_arch_rule
$(TESTAPPS_DIR)/$(1)/%: testdata/apps/%.cpp testdata/apps/common.h
	@mkdir -p $$(@D)
	$$(HIPCC) --offload-arch=$(1) $$(TESTAPPS_HIPFLAGS) -o $$@ $$<
endef
$(foreach a,gfx908 gfx906 gfx900 gfx1030,$(eval $(call testapps_arch_rule,$(a))))

# A code object for hipModuleLoad (features MODULE.co).
$(TESTAPPS_DIR)/module_kernels.co: testdata/apps/module_kernels.cpp
	@mkdir -p $(@D)
	$(HIPCC) --genco --offload-arch=gfx90a -O2 -o $@ $<

$(TESTAPPS_DIR)/hsa_queues $(TESTAPPS_DIR)/hsa_late_wakeup $(TESTAPPS_DIR)/hsa_crash $(TESTAPPS_DIR)/hsa_pcs: $(TESTAPPS_DIR)/%: testdata/apps/%.c testdata/apps/hsa_app.h
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -lhsa-runtime64 -pthread

# No ROCm library: its ROCTx marks go to rocprof-go's preload library.
$(TESTAPPS_DIR)/realtime_marks: testdata/apps/realtime_marks.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -ldl

.PHONY: testapps
testapps: $(TESTAPPS_BINS)
