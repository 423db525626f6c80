# Sample apps for the end-to-end tests and benchmarks (testdata/apps), built
# with hipcc for the virtual GPU's default architecture into build/testdata,
# plus gfx908 builds of two of them into build/testdata/gfx908.
HIPCC            ?= hipcc
TESTAPPS_DIR     := $(BUILD)/testdata
TESTAPPS_HIP     := multistream memcheck multithread abort segfault fork exec tiny_kernels callrate
TESTAPPS_GFX908  := multistream memcheck
TESTAPPS_BINS    := $(addprefix $(TESTAPPS_DIR)/,$(TESTAPPS_HIP) hsa_queues) \
                    $(addprefix $(TESTAPPS_DIR)/gfx908/,$(TESTAPPS_GFX908))
TESTAPPS_HIPFLAGS := -O2 -std=c++17

TEST_PREREQS += $(TESTAPPS_BINS)

$(TESTAPPS_DIR)/%: testdata/apps/%.cpp testdata/apps/common.h
	@mkdir -p $(@D)
	$(HIPCC) --offload-arch=gfx90a $(TESTAPPS_HIPFLAGS) -o $@ $<

$(TESTAPPS_DIR)/gfx908/%: testdata/apps/%.cpp testdata/apps/common.h
	@mkdir -p $(@D)
	$(HIPCC) --offload-arch=gfx908 $(TESTAPPS_HIPFLAGS) -o $@ $<

$(TESTAPPS_DIR)/hsa_queues: testdata/apps/hsa_queues.c
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -o $@ $< -lhsa-runtime64 -pthread

.PHONY: testapps
testapps: $(TESTAPPS_BINS)
