# make scale-outputs [SCALE_RECORDS=N] [SCALE_FORMATS=csv,rocpd,...]: the
# writers' memory at scale (issue 43, docs/performance.md "Writing the
# outputs"): a scale spool of N records (default 100M, 77 bytes each under
# $TMPDIR, removed after) written to every format, each in its own
# process, its peak RssAnon and records per CPU-second reported and the
# 512 MiB bound asserted. Outside CI: 100M records take tens of minutes on
# 2 cores. CI runs TestWritingMemoryDoesNotGrowWithTheTrace (200k and 2M).
SCALE_RECORDS ?= 100000000
SCALE_FORMATS ?=
.PHONY: scale-outputs
scale-outputs:
	ROCPROF_GO_SCALE_RECORDS=$(SCALE_RECORDS) ROCPROF_GO_SCALE_FORMATS=$(SCALE_FORMATS) \
	  $(GO) test -run '^$$' -bench '^BenchmarkWritingAtScale$$' -benchtime 1x -timeout 0 -v ./internal/output/
