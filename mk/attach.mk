# Attach (issue 42, docs/attach.md): the sample apps of test/attach on the
# host's ROCm 5.2 (mk/rocm.mk builds attach_server in every root as well;
# the Python spawn workers, testdata/apps/attach_spawn.py, load
# module_kernels.co, which mk/testapps.mk and mk/rocm.mk build).
# attach_server links rocprof-go's ROCTx library, as the hip_calls_* apps do
# (mk/hip.mk): its ranges reach the profiler through its GOT while attached.
# attach_static is a statically linked program the CLI must refuse.
ATTACH_APPS := $(BUILD)/testdata/attach_server $(BUILD)/testdata/attach_static

TEST_PREREQS += $(ATTACH_APPS)

$(BUILD)/testdata/attach_server: testdata/apps/attach_server.cpp testdata/apps/common.h \
                                 $(BUILD)/lib/librocprofiler-sdk-roctx.so.1 mk/attach.mk
	@mkdir -p $(@D)
	$(HIPCC) --offload-arch=gfx90a -O2 -std=c++17 -Iinternal/roctx/include -o $@ $< \
	  -L$(BUILD)/lib -lrocprofiler-sdk-roctx -Wl,-rpath,'$$ORIGIN/../lib' -pthread

$(BUILD)/testdata/attach_static: testdata/apps/attach_static.c mk/attach.mk
	@mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -Werror -static -o $@ $<

.PHONY: attach-apps
attach-apps: $(ATTACH_APPS)
