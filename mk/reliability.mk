# Reliability: the fault sample apps (testdata/apps/fault_*.cpp) the end-to-end
# fault tests in test/reliability run, a 10M-dispatch soak, and a fuzzing run
# that records each target's duration and executions (docs/reliability.md).
RELIABILITY_APPS := $(addprefix $(BUILD)/testdata/,fault_exit fault_progress fault_inspect fault_unprofiled)

TEST_PREREQS += $(RELIABILITY_APPS)

$(RELIABILITY_APPS): $(BUILD)/testdata/%: testdata/apps/%.cpp testdata/apps/common.h
	@mkdir -p $(@D)
	$(HIPCC) --offload-arch=gfx90a -O2 -std=c++17 -o $@ $<

# The fault and security tests alone, with their measured results
# (the RESULT lines docs/reliability.md is filled from).
.PHONY: reliability
reliability: build $(TEST_PREREQS)
	@mkdir -p $(BUILD)
	$(GO) test -count=1 -v -timeout 40m ./test/reliability 2>&1 | tee $(BUILD)/reliability.txt; \
	  rc=$${PIPESTATUS[0]}; grep 'RESULT' $(BUILD)/reliability.txt | sed 's/^ *[a-z_]*_test.go:[0-9]*: //'; exit $$rc

# The hostile-environment benchmark (issue 19; test/reliability/hostile_bench_test.go):
# the faults the issue measured before its fixes — a 64 MiB and 1 MiB spool file
# system, a full output disk per format, SIGKILL of rocprof-go, --timeout with an
# orphan ignoring SIGTERM, 20 concurrent runs into one directory, a 14 MB input
# file, FIFOs and another user's flock, OTF2 with 130,000 thread ids — each
# printing RESULT lines for docs/reliability.md. Long (~2 min, 75 s of it OTF2) and as root
# (it mounts tmpfs, also over /dev/shm in a private mount namespace), so
# outside CI: the tests skip unless ROCPROF_GO_RELIABILITY_BENCH=1.
# RELIABILITY_BENCH_DISPATCHES / _THREADS scale the two largest figures.
RELIABILITY_BENCH_DISPATCHES ?= 600000
RELIABILITY_BENCH_THREADS    ?= 130000
.PHONY: reliability-bench
reliability-bench: build $(TEST_PREREQS)
	@mkdir -p $(BUILD)
	ROCPROF_GO_RELIABILITY_BENCH=1 ROCPROF_GO_BENCH_DISPATCHES=$(RELIABILITY_BENCH_DISPATCHES) \
	  ROCPROF_GO_BENCH_THREADS=$(RELIABILITY_BENCH_THREADS) \
	  $(GO) test -count=1 -v -timeout 90m -run '^TestHostile' ./test/reliability 2>&1 | tee $(BUILD)/reliability-bench.txt; \
	  rc=$${PIPESTATUS[0]}; grep 'RESULT' $(BUILD)/reliability-bench.txt | sed 's/^ *[a-z_]*_test.go:[0-9]*: //'; exit $$rc

# 10M dispatches through the profiler, against a 1M run: every record is in
# the output (run.json), rocprof-go's own peak memory (VmHWM, polled) stays
# flat (10M within 1.5x of 1M), the time per dispatch does not grow (within
# 1.5x), and the app's peak memory under the profiler is compared with the
# bare app's (tiny_kernels queues every launch before it synchronises, so
# the app itself grows with N, with or without the profiler).
SOAK_DISPATCHES ?= 10000000
SOAK_BASELINE   ?= 1000000
SOAK_DIR        ?= $(BUILD)/soak-reliability
.PHONY: soak-reliability
soak: soak-reliability
soak-reliability: build $(BUILD)/testdata/tiny_kernels
	@set -e; rm -rf $(SOAK_DIR); mkdir -p $(SOAK_DIR); app=$(BUILD)/testdata/tiny_kernels; \
	for n in $(SOAK_BASELINE) $(SOAK_DISPATCHES); do \
	  LD_PRELOAD=$(VGPU_LIB) /usr/bin/time -f '%M' -o $(SOAK_DIR)/bare.$$n $$app $$n > /dev/null 2>&1; \
	  s=$$(date +%s.%N); \
	  $(CLI) --virtual-gpu --kernel-trace -f csv -d $(SOAK_DIR)/out.$$n -- $$app $$n > $(SOAK_DIR)/app.$$n 2> $(SOAK_DIR)/err.$$n & cli=$$!; \
	  while kill -0 $$cli 2>/dev/null; do \
	    grep -s VmHWM /proc/$$cli/status > $(SOAK_DIR)/hwm.tmp && cp $(SOAK_DIR)/hwm.tmp $(SOAK_DIR)/cli-hwm.$$n; \
	    a=$$(pgrep -P $$cli -x tiny_kernels || true); \
	    [ -z "$$a" ] || { grep -s VmHWM /proc/$$a/status > $(SOAK_DIR)/hwm.tmp && cp $(SOAK_DIR)/hwm.tmp $(SOAK_DIR)/app-hwm.$$n || true; }; \
	    sleep 0.5; \
	  done; \
	  wait $$cli || { echo "soak-reliability: $$n dispatches: rocprof-go failed:"; tail -5 $(SOAK_DIR)/err.$$n; exit 1; }; \
	  wall=$$(python3 -c "import time; print(round(time.time()-$$s, 2))"); \
	  got=$$(python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); print(sum(f["records"] for f in m["files"] if f["domain"]=="KERNEL_DISPATCH"))' $(SOAK_DIR)/out.$$n/run.json); \
	  cli_kb=$$(awk '{print $$2}' $(SOAK_DIR)/cli-hwm.$$n); app_kb=$$(awk '{print $$2}' $(SOAK_DIR)/app-hwm.$$n); bare_kb=$$(cat $(SOAK_DIR)/bare.$$n); \
	  echo "soak-reliability: $$n dispatches: found $$got; rocprof-go peak $$cli_kb KiB; app peak $$app_kb KiB (bare $$bare_kb KiB); wall $$wall s ($$(python3 -c "print(round($$wall*1e9/$$n))") ns/dispatch)"; \
	  [ "$$got" = "$$n" ] || { echo "soak-reliability: records lost"; exit 1; }; \
	  echo "$$n $$cli_kb $$wall" >> $(SOAK_DIR)/summary; rm -rf $(SOAK_DIR)/out.$$n; \
	done; \
	python3 -c 'import sys; (n1,r1,w1),(n2,r2,w2)=[map(float,l.split()) for l in open(sys.argv[1])]; \
	  rr=r2/r1; tr=(w2/n2)/(w1/n1); print("soak-reliability: rocprof-go peak memory ratio %.2f, per-dispatch time ratio %.2f (limits 1.5)" % (rr,tr)); \
	  sys.exit(0 if rr<=1.5 and tr<=1.5 else 1)' $(SOAK_DIR)/summary

# Every fuzz target, one after another (fuzzing is CPU-bound: one worker,
# -parallel 1, on a shared machine), each for FUZZTIME; a table of duration,
# executions and findings in $(BUILD)/fuzz/summary.md for docs/reliability.md.
FUZZ_DIR ?= $(BUILD)/fuzz
.PHONY: fuzz-record
fuzz-record:
	@mkdir -p $(FUZZ_DIR); : > $(FUZZ_DIR)/summary.md; fail=0; \
	echo "| package | target | fuzztime | wall (s) | executions | result |" >> $(FUZZ_DIR)/summary.md; \
	echo "|---|---|---|---|---|---|" >> $(FUZZ_DIR)/summary.md; \
	for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg 2>/dev/null | grep '^Fuzz'); do \
	    log=$(FUZZ_DIR)/$$f.log; s=$$(date +%s); echo "== $$pkg $$f ($(FUZZTIME))"; \
	    crashers=$$($(GO) list -f '{{.Dir}}' $$pkg)/testdata/fuzz/$$f; before=$$(ls $$crashers 2>/dev/null | wc -l); \
	    if $(GO) test $$pkg -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) -parallel 1 > $$log 2>&1; then res="no finding"; \
	    elif [ $$(ls $$crashers 2>/dev/null | wc -l) -gt $$before ]; then res="FINDING: see $$log and $$crashers"; fail=1; \
	    elif grep -q 'context deadline exceeded' $$log; then res="no finding (Go 1.26 fuzz coordinator deadline race, go.dev/issue/75804)"; \
	    else res="FAILED: see $$log"; fail=1; fi; \
	    execs=$$(grep -o 'execs: [0-9]*' $$log | tail -1 | cut -d' ' -f2); \
	    echo "| $${pkg#github.com/rocprof-go/rocprof-go/} | $$f | $(FUZZTIME) | $$(( $$(date +%s) - s )) | $$execs | $$res |" | tee -a $(FUZZ_DIR)/summary.md; \
	  done; \
	done; exit $$fail
