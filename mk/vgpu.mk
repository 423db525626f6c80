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

$(VGPU_LIB): $(VGPU_SRCS) $(VGPU_HDRS) vgpu/src/libhsakmt.map mk/vgpu.mk
	@mkdir -p $(VGPU_DIR)
	$(CC) $(VGPU_CFLAGS) -o $@ $(VGPU_SRCS) $(VGPU_LDFLAGS)

.PHONY: vgpu
vgpu: $(VGPU_LIB)
