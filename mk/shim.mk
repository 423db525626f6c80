# The cgo HSA shim: build/lib/librocprof-go-shim.so (Go -buildmode=c-shared
# from internal/hsa, named in HSA_TOOLS_LIB), and the test apps its tests run
# on the virtual GPU.
SHIM_LIB      := $(BUILD)/lib/librocprof-go-shim.so
SHIM_SRC      := $(wildcard internal/hsa/*.go internal/hsa/*.c internal/hsa/*.cpp \
                   internal/hsa/*.h internal/hsa/*.hpp) internal/hsa/preload/rpg_recorder.h \
                 internal/hsa/preload/rpg_domains_gen.h internal/hsa/preload/rpg_env_gen.h \
                 internal/hsa/preload/rpg_internal.h \
                 internal/tracing/spool.h
# Every file of the module's Go packages the shim is built from (counters,
# aql, configs/gpu's embedded data, ...), so that a change in any of them
# rebuilds it; go.mod and go.sum for the other modules'.
SHIM_GO_DEPS  := $(patsubst $(CURDIR)/%,%,$(shell $(GO) list -deps -f '{{if and .Module .Module.Main}}{{$$d := .Dir}}{{range .GoFiles}}{{$$d}}/{{.}} {{end}}{{range .CgoFiles}}{{$$d}}/{{.}} {{end}}{{range .EmbedFiles}}{{$$d}}/{{.}} {{end}}{{end}}' ./internal/hsa)) \
                 go.mod go.sum
# asyncpreemptoff: no SIGURG into the app's threads (a test checks it is set).
SHIM_LDFLAGS  := -X=runtime.godebugDefault=asyncpreemptoff=1
SHIM_TEST_DIR := $(BUILD)/test/shim
SHIM_APPS     := $(SHIM_TEST_DIR)/multistream $(SHIM_TEST_DIR)/agentinfo \
                 $(SHIM_TEST_DIR)/onload_sizes $(SHIM_TEST_DIR)/dispatch \
                 $(SHIM_TEST_DIR)/attach_hsa

NATIVE_LIBS  += $(SHIM_LIB)
PAYLOAD      += $(SHIM_LIB)
TEST_PREREQS += $(SHIM_APPS)

# Go's build cache does not see headers outside the package directory: a
# change to the preload library's headers alone would relink a shim compiled
# against the old ones. Their hash in CGO_CPPFLAGS is part of the cache key.
SHIM_HDR_HASH = $(shell cat internal/hsa/preload/*.h internal/tracing/spool.h | sha1sum | cut -c1-16)

$(SHIM_LIB): $(SHIM_SRC) $(SHIM_GO_DEPS) mk/shim.mk
	@mkdir -p $(dir $@)
	CGO_CPPFLAGS='-DRPG_HEADERS_HASH=$(SHIM_HDR_HASH)' CGO_CFLAGS='-O2 -g -Wall -Werror' CGO_CXXFLAGS='-O2 -g -Wall -Werror' \
	  $(GO) build -trimpath -buildmode=c-shared -ldflags='$(SHIM_LDFLAGS)' -o $@ ./internal/hsa
	@rm -f $(basename $@).h

$(SHIM_TEST_DIR)/multistream: internal/hsa/testdata/multistream.hip mk/shim.mk
	@mkdir -p $(dir $@)
	hipcc --offload-arch=gfx90a -O2 -o $@ $<

$(SHIM_TEST_DIR)/agentinfo: internal/hsa/testdata/agentinfo.c mk/shim.mk
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -o $@ $< -lhsa-runtime64

$(SHIM_TEST_DIR)/dispatch: internal/hsa/testdata/dispatch.c mk/shim.mk
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -o $@ $< -lhsa-runtime64

# Host-built, run in every root of the matrix too (attach_hsa_test.go).
$(SHIM_TEST_DIR)/attach_hsa: internal/hsa/testdata/attach_hsa.c testdata/apps/hsa_app.h mk/shim.mk
	@mkdir -p $(dir $@)
	$(CC) -O2 -Wall -Wextra -Itestdata/apps -o $@ $< -lhsa-runtime64 -ldl

$(SHIM_TEST_DIR)/onload_sizes: internal/hsa/testdata/onload_sizes.cpp mk/shim.mk
	@mkdir -p $(dir $@)
	$(CXX) -O1 -std=c++17 -Wall -DAMD_INTERNAL_BUILD -I/usr/include/hsa -o $@ $< -ldl

.PHONY: shim shim-apps
shim: $(SHIM_LIB)
shim-apps: $(SHIM_APPS)
