# AMD's libraries under the profiler (test/rocmlibs, docs/rocm-libraries.md).
# rocblas-bench and rocfft-test come from Debian's packages in the roots
# (configs/rocm-matrix.tsv); RCCL's all_reduce_perf is not packaged, so it
# is built here, inside each root that has RCCL, from the vendored
# rccl-tests sources: hipify-perl, then hipcc, as upstream's Makefile does.
ROCMLIBS_RCCL_NAMES := 6.1 7.2
RCCL_TESTS_DIR      := testdata/third_party/rccl-tests
RCCL_TESTS_SRCS     := $(RCCL_TESTS_DIR)/src/all_reduce.cu $(RCCL_TESTS_DIR)/src/common.cu \
                       $(RCCL_TESTS_DIR)/verifiable/verifiable.cu
RCCL_TESTS_HDRS     := $(addprefix $(RCCL_TESTS_DIR)/src/,common.h nccl1_compat.h rccl_float8.h timer.h git_version.h) \
                       $(RCCL_TESTS_DIR)/verifiable/verifiable.h
RCCL_TESTS_COMPAT   := testdata/third_party/rccl-tests-compat.h

# rccl_test_rule NAME: <name>-apps/all_reduce_perf (hipified sources in
# <name>-apps/rccl-tests/, removed and rewritten on every build).
define rccl_test_rule
$(ROCM_DIR)/$(1)-apps/all_reduce_perf: $(RCCL_TESTS_SRCS) $(RCCL_TESTS_HDRS) $(RCCL_TESTS_DIR)/src/timer.cc $(RCCL_TESTS_COMPAT) mk/rocmlibs.mk $$(ROCM_STAMP_$(1))
	@rm -rf $(ROCM_DIR)/$(1)-apps/rccl-tests && mkdir -p $(ROCM_DIR)/$(1)-apps/rccl-tests
	$$(ROCM_RUN_$(1)) sh -ec 'for f in $(RCCL_TESTS_SRCS); do hipify-perl -quiet-warnings $$$$f > $(ROCM_DIR)/$(1)-apps/rccl-tests/$$$$(basename $$$$f).cpp; done; \
	  for f in $(RCCL_TESTS_HDRS); do hipify-perl -quiet-warnings $$$$f > $(ROCM_DIR)/$(1)-apps/rccl-tests/$$$$(basename $$$$f); done'
	cp $(RCCL_TESTS_DIR)/src/timer.cc $(ROCM_DIR)/$(1)-apps/rccl-tests/
	echo 'const char *rcclTestsGitHash = "ae3e635 (vendored)";' > $(ROCM_DIR)/$(1)-apps/rccl-tests/git_version.cpp
	$$(ROCM_RUN_$(1)) hipcc --offload-arch=gfx90a -O2 -std=c++14 -include $(CURDIR)/$(RCCL_TESTS_COMPAT) \
	  -I$(ROCM_DIR)/$(1)-apps/rccl-tests -o $$@ \
	  $(addprefix $(ROCM_DIR)/$(1)-apps/rccl-tests/,all_reduce.cu.cpp common.cu.cpp verifiable.cu.cpp timer.cc git_version.cpp) \
	  -lrccl -pthread

rocm-testapps-$(1): $(ROCM_DIR)/$(1)-apps/all_reduce_perf
endef
$(foreach n,$(ROCMLIBS_RCCL_NAMES),$(eval $(call rccl_test_rule,$(n))))
