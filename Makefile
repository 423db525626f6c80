# rocprof-go build. Components add their own rules in mk/*.mk and append to:
#   NATIVE_LIBS  libraries built from C/cgo (built before the CLI)
#   PAYLOAD      libraries the CLI embeds (copied into internal/launch/payload)
#   TEST_PREREQS things `make test` needs besides the CLI (sample apps, ...)
SHELL      := /bin/bash
GO         ?= go
BUILD      := $(CURDIR)/build
CLI        := $(BUILD)/rocprof-go
# The DuckDB engine, an executable the CLI embeds compressed (internal/duckdb
# says why it is not linked in): fully static, so it runs on any x86-64
# Linux whatever its glibc.
DUCKDB_ENGINE := $(BUILD)/rocprof-go-duckdb
PAYLOAD_DIR := internal/launch/payload
DUCKDB_PAYLOAD_DIR := internal/duckdb/payload
NATIVE_LIBS :=
PAYLOAD    :=
TEST_PREREQS :=
GOTEST_FLAGS ?= -count=1 -timeout 40m
# Debian packages: what the build and the demo need (the compilers, hipcc
# and ROCm 5.2.3's HIP and HSA headers for the shim, the preload library and
# the sample app; libdrm's amdgpu.h for the virtual GPU), and what the tests
# add (the ROCm roots' debootstrap, OTF2 and sqlite3 to read outputs back,
# llvm-objdump, the thunk's headers, Open MPI, and Slurm with munge for the
# one-node cluster test/slurm starts, valgrind for the instructions a traced
# call costs on any CPU, ...).
APT_BUILD_PACKAGES := build-essential hipcc libamdhip64-dev libhsa-runtime-dev libdrm-dev
APT_TEST_PACKAGES  := libhsakmt-dev rocminfo llvm debootstrap libopen-trace-format2-dev otf2-tools sqlite3 libsqlite3-dev openmpi-bin bindfs \
                      slurm-wlm munge python3 bash bash-completion valgrind gcc-multilib
APT_PACKAGES := $(APT_BUILD_PACKAGES) $(APT_TEST_PACKAGES)

export ROCPROF_GO_BUILD := $(BUILD)
# The commit `rocprof-go --version` prints (git_revision), "-dirty" when the
# tree differs from it; empty outside a git checkout (the CLI then falls back
# to the Go toolchain's stamp, which GOFLAGS=-buildvcs=false removes).
GIT_REVISION := $(shell git rev-parse HEAD 2>/dev/null)$(shell git rev-parse HEAD >/dev/null 2>&1 && ! git diff --quiet HEAD 2>/dev/null && echo -dirty)

.PHONY: all deps build-deps build cli duckdb-engine generate test bench demo lint clean soak fuzz
all: build

include $(sort $(wildcard mk/*.mk))

# apt_install PACKAGES: as root, install those that are missing; as another
# user, print the apt-get line to run.
define apt_install
@if [ "$$(id -u)" = 0 ]; then \
	  missing=$$(for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || echo $$p; done); \
	  if [ -n "$$missing" ]; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "$@: all Debian packages present"; fi; \
	else \
	  echo "run as root, or install the packages yourself:"; \
	  echo "  sudo apt-get install -y $(1)"; \
	fi
endef

# What `make build` and `make demo` need: the build's Debian packages and the
# Go modules.
build-deps:
	$(call apt_install,$(APT_BUILD_PACKAGES))
	$(GO) mod download

# What `make test` (and CI) needs: every Debian package, the Go modules, and
# the DuckDB test module.
deps:
	$(call apt_install,$(APT_PACKAGES))
	$(GO) mod download

# The engine first: the CLI embeds it (compressed) when it is there.
build: duckdb-engine cli

cli: $(NATIVE_LIBS)
	@mkdir -p $(BUILD) $(PAYLOAD_DIR)
	@find $(PAYLOAD_DIR) -mindepth 1 ! -name README.md -delete
	@for f in $(PAYLOAD); do cp $$f $(PAYLOAD_DIR)/; done
	@find $(DUCKDB_PAYLOAD_DIR) -mindepth 1 ! -name README.md -delete
	@if [ -x $(DUCKDB_ENGINE) ]; then gzip -1 -c $(DUCKDB_ENGINE) > $(DUCKDB_PAYLOAD_DIR)/rocprof-go-duckdb.gz; fi
	$(GO) build -trimpath -ldflags '-X main.gitRevision=$(GIT_REVISION)' -o $(CLI) ./cmd/rocprof-go

# glibc's warnings that getpwuid and getaddrinfo need its shared NSS modules
# in a static executable are filtered: DuckDB only asks for the home
# directory (no ~ is expanded here) and resolves no name.
duckdb-engine:
	@mkdir -p $(BUILD)
	$(GO) build -trimpath -tags netgo,osusergo -ldflags "-s -w -extldflags '-static'" -o $(DUCKDB_ENGINE) ./cmd/rocprof-go-duckdb 2>&1 \
	  | { grep -v -e 'in statically linked applications requires at runtime' -e ': in function ' -e '^# github.com/rocprof-go' || true; }; test -x $(DUCKDB_ENGINE)

generate: rocm-roots
	$(GO) generate ./...

test: deps build $(TEST_PREREQS)
	@$(MAKE) --no-print-directory rocm-versions
	$(GO) test $(GOTEST_FLAGS) ./...

# The host line first (CPU, hypervisor, clock source, the clock reads'
# cost: docs/performance.md, "The host beside each figure"); every benchmark
# that reports a ratio logs it again beside its figures.
bench: build $(TEST_PREREQS)
	$(GO) run ./internal/cmd/hostinfo | tee $(BUILD)/bench.txt
	$(GO) test -run '^$$' -bench . -benchtime 1x ./... | tee -a $(BUILD)/bench.txt
	@echo; echo "Ratios against the no-profiler baseline (each benchmark's own method; CPU model and clock reads in brackets):"
	@awk -f scripts/bench-ratios.awk $(BUILD)/bench.txt | tee $(BUILD)/bench-ratios.txt

# Long fuzzing runs, outside CI (CI replays the seeds in `make test`).
FUZZTIME ?= 10m
fuzz:
	@for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    echo "== $$pkg $$f ($(FUZZTIME))"; \
	    $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -parallel 1 || exit 1; \
	  done; \
	done

# The README's first command: the CLI (with the libraries it embeds) and the
# one sample app scripts/demo.sh profiles, on the host's ROCm 5.2.3; none of
# the test suite (ROCm roots, other apps, DuckDB), nor the DuckDB engine
# (make build's rocprof-go-duckdb) the demo does not run. After the packages are in,
# the native libraries and the app build in parallel, one job per core (the
# preload library's one long compile beside the shim's Go build).
# docs/building.md has its measured time; test/doccommands checks what it
# builds (make -n).
DEMO_APP  := $(TESTAPPS_DIR)/multistream
DEMO_JOBS ?= $(shell nproc 2>/dev/null || echo 2)
demo: build-deps
	@$(MAKE) --no-print-directory -j$(DEMO_JOBS) cli $(DEMO_APP)
	./scripts/demo.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

clean:
	rm -rf $(BUILD)
	find $(PAYLOAD_DIR) -mindepth 1 ! -name README.md -delete
