# The ROCm matrix (docs/rocm-matrix.md): Debian roots holding ROCm 6.1
# (trixie), 6.4 (sid) and 7.2 (experimental), built by scripts/rocm-root.sh at
# the versions pinned in configs/rocm-matrix.tsv into build/rocm/<name>, and
# the sample apps compiled INSIDE each root with that suite's own hipcc, g++
# and HSA headers into build/rocm/<name>-apps (beside the root, not in it:
# rebuilding a root keeps them; they are rebuilt when the root's stamp moves).
# The host's own ROCm 5.2.3 is the matrix's fourth entry (build/testdata).
# `make test` builds the matrix first (the tests run on every runtime), which
# needs root and the Debian mirror; `make build` does not.
ROCM_NAMES     := 6.1 6.4 7.2
ROCM_DIR       := $(BUILD)/rocm
ROCM_ROOT_SH   := scripts/rocm-root.sh
ROCM_HIPFLAGS  := -O2 -std=c++17
# Every HIP sample app compiles in every root (checked on 2026-11-25), so
# all of testdata/apps is built; hip_calls_* and roctx_legacy link the
# project's ROCTx libraries from build/lib (host-built, plain C).
ROCM_HIP_APPS  := $(filter-out hip_calls_% roctx_legacy module_kernels attach_server,\
                    $(basename $(notdir $(wildcard testdata/apps/*.cpp))))
# attach_server (test/attach, mk/attach.mk) links ROCTx as they do.
ROCM_ROCTX_APPS := $(basename $(notdir $(wildcard testdata/apps/hip_calls_*.cpp))) attach_server
ROCM_HSA_APPS  := hsa_queues hsa_late_wakeup hsa_pcs
# vgpu/testdriver's kfd_events and pm4_standalone link the virtual GPU itself
# (no ROCm runtime in them), so they are not per-suite and not built here.
ROCM_DRIVERS   := pmc_golden pm4_ib
# Architectures ROCm 5.2 cannot run, built in every root (all three hipccs,
# clang 17, 21 and 22, compile for them) into <name>-apps/<arch>/.
ROCM_NEW_ARCHS := gfx942 gfx1100
ROCM_NEW_ARCH_APPS := multistream devices memcheck
# hsa_pcs samples loads module_fill for the GPU it runs on.
ROCM_NEW_ARCH_COS := module_kernels.co
ROCM_ROCTX_LIB := $(BUILD)/lib/librocprofiler-sdk-roctx.so.1
ROCM_ROCTX_LEGACY_LIB := $(BUILD)/lib/libroctx64.so.4

# rocm_apps NAME: the files `make rocm-testapps` builds for NAME.
rocm_apps = $(addprefix $(ROCM_DIR)/$(1)-apps/,$(ROCM_HIP_APPS) $(ROCM_ROCTX_APPS) hip_calls_systrace_spt roctx_legacy \
              module_kernels.co $(ROCM_HSA_APPS) $(ROCM_DRIVERS) libvgpu_testtool.so \
              $(foreach a,$(ROCM_NEW_ARCHS),$(addprefix $(a)/,$(ROCM_NEW_ARCH_APPS) $(ROCM_NEW_ARCH_COS))))

.PHONY: rocm-roots rocm-testapps rocm-versions rocm-force
rocm-force:

# The script decides (from the stamp) whether anything is to be done and
# rewrites the stamp only when it rebuilt the root, so the apps below are
# recompiled only then.
# rocm_arch_rule NAME ARCH: the apps of ROCM_NEW_ARCH_APPS built for ARCH.
define rocm_arch_rule
$(addprefix $(ROCM_DIR)/$(1)-apps/$(2)/,$(ROCM_NEW_ARCH_APPS)): $(ROCM_DIR)/$(1)-apps/$(2)/%: testdata/apps/%.cpp testdata/apps/common.h $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) hipcc --offload-arch=$(2) $(ROCM_HIPFLAGS) -o $$@ $$<
$(ROCM_DIR)/$(1)-apps/$(2)/module_kernels.co: testdata/apps/module_kernels.cpp $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) hipcc --genco --offload-arch=$(2) -O2 -o $$@ $$<
endef

define rocm_root_rules
ROCM_STAMP_$(1) := $(ROCM_DIR)/$(1)/.rocm-root-stamp
ROCM_RUN_$(1)   := $(ROCM_ROOT_SH) run $(ROCM_DIR)/$(1) --

$$(ROCM_STAMP_$(1)): rocm-force
	$(ROCM_ROOT_SH) build $(1) $(ROCM_DIR)/$(1)

.PHONY: rocm-root-$(1) rocm-testapps-$(1)
rocm-root-$(1): $$(ROCM_STAMP_$(1))
rocm-testapps-$(1): $(call rocm_apps,$(1))

$(addprefix $(ROCM_DIR)/$(1)-apps/,$(ROCM_HIP_APPS)): $(ROCM_DIR)/$(1)-apps/%: testdata/apps/%.cpp testdata/apps/common.h $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) hipcc --offload-arch=gfx90a $(ROCM_HIPFLAGS) -o $$@ $$<

$(foreach a,$(ROCM_NEW_ARCHS),$$(eval $$(call rocm_arch_rule,$(1),$(a))))

$(addprefix $(ROCM_DIR)/$(1)-apps/,$(ROCM_ROCTX_APPS)): $(ROCM_DIR)/$(1)-apps/%: testdata/apps/%.cpp testdata/apps/common.h $(ROCM_ROCTX_LIB) $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) hipcc --offload-arch=gfx90a $(ROCM_HIPFLAGS) -Iinternal/roctx/include -o $$@ $$< \
	  -L$(BUILD)/lib -lrocprofiler-sdk-roctx -Wl,-rpath,'$$$$ORIGIN/../../lib'

$(ROCM_DIR)/$(1)-apps/hip_calls_systrace_spt: testdata/apps/hip_calls_systrace.cpp testdata/apps/common.h $(ROCM_ROCTX_LIB) $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) hipcc --offload-arch=gfx90a $(ROCM_HIPFLAGS) $(HIP_SPT_FLAGS) -Iinternal/roctx/include -o $$@ $$< \
	  -L$(BUILD)/lib -lrocprofiler-sdk-roctx -Wl,-rpath,'$$$$ORIGIN/../../lib'

$(ROCM_DIR)/$(1)-apps/roctx_legacy: testdata/apps/roctx_legacy.cpp $(ROCM_ROCTX_LEGACY_LIB) $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) g++ -O2 -Wall -Wextra -Iinternal/roctx/include -o $$@ $$< -L$(BUILD)/lib -lroctx64 \
	  -Wl,-rpath,'$$$$ORIGIN/../../lib'

$(ROCM_DIR)/$(1)-apps/module_kernels.co: testdata/apps/module_kernels.cpp $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) hipcc --genco --offload-arch=gfx90a -O2 -o $$@ $$<

$(addprefix $(ROCM_DIR)/$(1)-apps/,$(ROCM_HSA_APPS)): $(ROCM_DIR)/$(1)-apps/%: testdata/apps/%.c testdata/apps/hsa_app.h $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) gcc -O2 -Wall -Wextra -o $$@ $$< -lhsa-runtime64 -pthread

$(addprefix $(ROCM_DIR)/$(1)-apps/,$(ROCM_DRIVERS)): $(ROCM_DIR)/$(1)-apps/%: vgpu/testdriver/%.c vgpu/testdriver/hsa_util.h $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) gcc -O2 -Wall -Wextra -o $$@ $$< -lhsa-runtime64 -pthread

# The HSA_TOOLS_LIB test tool against this suite's hsa_api_trace.h.
$(ROCM_DIR)/$(1)-apps/libvgpu_testtool.so: vgpu/testtool/tool.cpp $$(ROCM_STAMP_$(1))
	@mkdir -p $$(@D)
	$$(ROCM_RUN_$(1)) g++ -std=c++17 -O2 -Wall -fPIC -shared -DAMD_INTERNAL_BUILD -I/usr/include/hsa -o $$@ $$<
endef
$(foreach n,$(ROCM_NAMES),$(eval $(call rocm_root_rules,$(n))))

rocm-roots: $(foreach n,$(ROCM_NAMES),$(ROCM_STAMP_$(n)))
TEST_PREREQS += rocm-testapps
rocm-testapps: $(foreach n,$(ROCM_NAMES),rocm-testapps-$(n))

# The installed versions of each root (what the tests print into their log).
rocm-versions:
	@for n in $(ROCM_NAMES); do echo "== ROCm $$n ($(ROCM_DIR)/$$n)"; \
	  $(ROCM_ROOT_SH) versions $(ROCM_DIR)/$$n || exit 1; done
