# The preload library (plain C): the recorder and the HIP/ROCTx interposers.
# Every .c file in internal/hsa/preload is part of it. -z defs: an undefined
# symbol must fail here, not in every process the library is preloaded into
# (-z now would make each of them refuse to start).
PRELOAD_LIB := $(BUILD)/lib/librocprof-go-preload.so
PRELOAD_SRC := $(sort $(wildcard internal/hsa/preload/*.c))
PRELOAD_HDR := $(wildcard internal/hsa/preload/*.h) internal/tracing/spool.h \
               internal/hsa/descriptor.c internal/hsa/agentinfo.c internal/hsa/agentinfo.h
PRELOAD_CFLAGS ?= -O2 -g -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
                  -fno-strict-aliasing -fno-semantic-interposition -pthread
# The test driver that writes known spools (used by internal/tracing's tests).
SPOOL_DRIVER := $(BUILD)/test/spool-driver

NATIVE_LIBS += $(PRELOAD_LIB)
PAYLOAD += $(PRELOAD_LIB)
TEST_PREREQS += $(SPOOL_DRIVER)

$(PRELOAD_LIB): $(PRELOAD_SRC) $(PRELOAD_HDR) internal/hsa/preload/hip_exports.map internal/hsa/preload/rocr_exports.map mk/preload.mk
	@mkdir -p $(dir $@)
	$(CC) $(PRELOAD_CFLAGS) -shared -Wl,-soname,librocprof-go-preload.so -Wl,-z,now -Wl,-z,defs \
	  -Wl,--version-script=internal/hsa/preload/rocr_exports.map \
	  -Wl,--version-script=internal/hsa/preload/hip_exports.map -o $@ $(PRELOAD_SRC)

$(SPOOL_DRIVER): testdata/spool/driver.c $(PRELOAD_LIB)
	@mkdir -p $(dir $@)
	$(CC) -O2 -g -std=gnu11 -Wall -Wextra -pthread -Iinternal/hsa/preload -o $@ $< \
	  -L$(BUILD)/lib -lrocprof-go-preload -Wl,-rpath,$(BUILD)/lib

.PHONY: preload
preload: $(PRELOAD_LIB)
