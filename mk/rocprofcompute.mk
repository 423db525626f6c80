# rocprofiler-compute (AMD's rocprof-compute), unmodified, against rocprof-go
# on the virtual GPU (docs/rocprofiler-compute.md, test/rocprofcompute):
#
#   make test-rocprofiler-compute [ROCPROF_COMPUTE_SRC=...] [ROCPROF_COMPUTE_ROCM=6.4|7.2]
#
# ROCPROF_COMPUTE_SRC is the client's source. By default the tarball of
# rocprofiler-compute 3.3.0 in the shared folder beside the checkout
# (SHARED, default ../shared: $(SHARED)/clients/, README there), unpacked
# into $(ROCPROF_COMPUTE_DIR), never into the repository. It may also be a
# git directory of ROCm/rocm-systems (projects/rocprofiler-compute is
# extracted from ROCPROF_COMPUTE_REF), a directory holding
# rocprofiler-compute (src/rocprof-compute), one holding
# projects/rocprofiler-compute, or another tarball of the client. A missing
# source fails. .ci/run runs the target on the 6.4 and the 7.2 root; the
# test has the build tag rocprofcompute, so `go test ./...` (make test),
# which has no client, does not build it.
# Python: Debian's packages (APT_ROCPROFCOMPUTE_PACKAGES); those Debian
# lacks are import-only stand-ins in testdata/rocprofcompute/stubs.
SHARED               ?= ../shared
ROCPROF_COMPUTE_TARBALL := rocprofiler-compute-1b1610fc2b2a.tar.gz
ROCPROF_COMPUTE_SRC  ?= $(SHARED)/clients/$(ROCPROF_COMPUTE_TARBALL)
ROCPROF_COMPUTE_REF  ?= HEAD
ROCPROF_COMPUTE_ROCM ?= 6.4
ROCPROF_COMPUTE_DIR  := $(BUILD)/rocprofiler-compute
ROCPROF_COMPUTE_RUN  ?=
APT_ROCPROFCOMPUTE_PACKAGES := python3 python3-pandas python3-numpy python3-yaml python3-tabulate \
  python3-matplotlib python3-plotly python3-tqdm python3-pymongo python3-astunparse python3-textual \
  python3-setuptools util-linux

# The PC-sampling configurations profile multistream built with -g (its
# DWARF line table gives rocprofv3's Instruction_Comment, by which the
# client's PC Sampling table groups its rows; without it the table is
# empty), for gfx90a and gfx942, by the root's own hipcc.
ROCPROF_COMPUTE_G_APPS = $(foreach a,gfx90a gfx942,$(ROCM_DIR)/$(ROCPROF_COMPUTE_ROCM)-apps/g/$(a)/multistream)
$(ROCM_DIR)/%-apps/g/gfx90a/multistream: testdata/apps/multistream.cpp testdata/apps/common.h $(ROCM_DIR)/%/.rocm-root-stamp
	@mkdir -p $(@D)
	$(ROCM_ROOT_SH) run $(ROCM_DIR)/$* -- hipcc --offload-arch=gfx90a $(ROCM_HIPFLAGS) -g -o $@ $<
$(ROCM_DIR)/%-apps/g/gfx942/multistream: testdata/apps/multistream.cpp testdata/apps/common.h $(ROCM_DIR)/%/.rocm-root-stamp
	@mkdir -p $(@D)
	$(ROCM_ROOT_SH) run $(ROCM_DIR)/$* -- hipcc --offload-arch=gfx942 $(ROCM_HIPFLAGS) -g -o $@ $<

.PHONY: test-rocprofiler-compute rocprofcompute-deps rocprofcompute-src
rocprofcompute-deps:
	$(call apt_install,$(APT_ROCPROFCOMPUTE_PACKAGES))

# The client's source into $(ROCPROF_COMPUTE_DIR) (replaced every time).
rocprofcompute-src:
	@src='$(ROCPROF_COMPUTE_SRC)'; dst='$(ROCPROF_COMPUTE_DIR)'; \
	rm -rf "$$dst" "$$dst.tmp" && mkdir -p "$$dst.tmp" || exit 1; \
	if [ -f "$$src" ] && case "$$src" in *.tar.gz|*.tgz) true;; *) false;; esac; then \
	  echo "rocprofiler-compute: $$src"; \
	  tar -xzf "$$src" -C "$$dst.tmp" --strip-components=1 || { rm -rf "$$dst.tmp"; exit 1; }; \
	elif [ -f "$$src/src/rocprof-compute" ]; then \
	  cp -a "$$src/." "$$dst.tmp/"; \
	elif [ -f "$$src/projects/rocprofiler-compute/src/rocprof-compute" ]; then \
	  cp -a "$$src/projects/rocprofiler-compute/." "$$dst.tmp/"; \
	elif git --git-dir="$$src" rev-parse --verify -q '$(ROCPROF_COMPUTE_REF)^{commit}' >/dev/null 2>&1; then \
	  echo "rocprofiler-compute: $$src at $$(git --git-dir="$$src" rev-parse '$(ROCPROF_COMPUTE_REF)')"; \
	  set -o pipefail; \
	  git --git-dir="$$src" archive '$(ROCPROF_COMPUTE_REF)' projects/rocprofiler-compute \
	    | tar -x -C "$$dst.tmp" --strip-components=2 || exit 1; \
	else \
	  echo "make test-rocprofiler-compute: FAIL: no rocprofiler-compute source at ROCPROF_COMPUTE_SRC=$$src."; \
	  echo "  By default it is the shared folder's $(ROCPROF_COMPUTE_TARBALL) (SHARED=$(SHARED):"; \
	  echo "  put the shared folder beside the checkout, or give SHARED=DIR). Or give ROCPROF_COMPUTE_SRC="; \
	  echo "  a tarball of rocprofiler-compute, a git directory of https://github.com/ROCm/rocm-systems (a clone or"; \
	  echo "  mirror; projects/rocprofiler-compute is taken from ROCPROF_COMPUTE_REF=$(ROCPROF_COMPUTE_REF)),"; \
	  echo "  or a checkout of rocprofiler-compute (the directory holding src/rocprof-compute)."; \
	  rm -rf "$$dst.tmp"; exit 1; \
	fi; \
	test -f "$$dst.tmp/src/rocprof-compute" || { echo "make test-rocprofiler-compute: FAIL: $$src gave no src/rocprof-compute"; exit 1; }; \
	mv "$$dst.tmp" "$$dst"

# rocprof-go installed as rocprofiler-compute finds rocprofv3 (make install
# into a scratch PREFIX), then the tagged tests. ROCPROF_COMPUTE_RUN=REGEX
# narrows them to the configurations it names (e.g. 'gfx90a/csv',
# 'gfx942/stochastic', 'host_trap').
test-rocprofiler-compute: rocprofcompute-deps rocprofcompute-src build rocm-testapps-$(ROCPROF_COMPUTE_ROCM) \
    $(ROCM_DIR)/$(ROCPROF_COMPUTE_ROCM)-apps/multistream $(ROCM_DIR)/$(ROCPROF_COMPUTE_ROCM)-apps/gfx942/multistream \
    $(ROCPROF_COMPUTE_G_APPS)
	@prefix=$$(mktemp -d /tmp/rocprof-go-install.XXXXXX) || exit 1; \
	trap 'rm -rf "$$prefix"' EXIT; \
	$(MAKE) --no-print-directory -s install PREFIX="$$prefix" || exit 1; \
	ROCPROF_COMPUTE_DIR='$(ROCPROF_COMPUTE_DIR)' ROCPROF_COMPUTE_PREFIX="$$prefix" \
	ROCPROF_COMPUTE_ROCM='$(ROCPROF_COMPUTE_ROCM)' \
	  $(GO) test -tags rocprofcompute -count=1 -timeout 60m -v \
	    $(if $(ROCPROF_COMPUTE_RUN),-run '/$(ROCPROF_COMPUTE_RUN)') \
	    ./test/rocprofcompute/
