# rocprof-go's ROCTx library (internal/roctx): librocprofiler-sdk-roctx.so.1
# for applications built against internal/roctx/include, and the same code
# under roctracer's legacy name libroctx64.so.4. Neither records anything;
# the preload library's interposers do, under --marker-trace.
ROCTX_INC        := internal/roctx/include
ROCTX_SRC        := internal/roctx/src/roctx.c
ROCTX_HDR        := $(wildcard $(ROCTX_INC)/*/*.h)
ROCTX_LIB        := $(BUILD)/lib/librocprofiler-sdk-roctx.so.1
ROCTX_LEGACY_LIB := $(BUILD)/lib/libroctx64.so.4
ROCTX_CFLAGS     := -O2 -g -std=gnu11 -Wall -Wextra -Werror -fPIC -fvisibility=hidden \
                    -I$(ROCTX_INC)
# The legacy-API sample app (plain C++, no HIP).
ROCTX_APPS       := $(BUILD)/testdata/roctx_legacy

NATIVE_LIBS  += $(ROCTX_LIB) $(ROCTX_LEGACY_LIB)
TEST_PREREQS += $(ROCTX_APPS)

$(ROCTX_LIB): $(ROCTX_SRC) $(ROCTX_HDR) mk/roctx.mk
	@mkdir -p $(@D)
	$(CC) $(ROCTX_CFLAGS) -shared -Wl,-soname,$(@F) -Wl,-z,defs -o $@ $(ROCTX_SRC)
	ln -sf $(@F) $(@D)/librocprofiler-sdk-roctx.so

$(ROCTX_LEGACY_LIB): $(ROCTX_SRC) $(ROCTX_HDR) mk/roctx.mk
	@mkdir -p $(@D)
	$(CC) $(ROCTX_CFLAGS) -DROCTX_LEGACY -shared -Wl,-soname,$(@F) -Wl,-z,defs -o $@ $(ROCTX_SRC)
	ln -sf $(@F) $(@D)/libroctx64.so

$(BUILD)/testdata/roctx_legacy: testdata/apps/roctx_legacy.cpp $(ROCTX_LEGACY_LIB)
	@mkdir -p $(@D)
	$(CXX) -O2 -Wall -Wextra -I$(ROCTX_INC) -o $@ $< -L$(BUILD)/lib -lroctx64 \
	  -Wl,-rpath,'$$ORIGIN/../lib'

.PHONY: roctx
roctx: $(ROCTX_LIB) $(ROCTX_LEGACY_LIB)
