# CI guards of the code's shape (issue 22), run by .ci/run after make test:
#   check-generated  `go generate ./...` (the HIP/HSA tables from the ROCm
#                    matrix's headers and libraries, the architecture data
#                    and the virtual GPU's counter register table from
#                    ../shared) leaves the tree as committed;
#   check-nocgo      the pure-Go packages build, vet and test without cgo,
#                    and stay free of cgo (theirs or a dependency's);
#   check-layering   the import layering (test/layering's table; also part
#                    of go test ./...);
#   check-domains    a tracing domain is spelled only in its table
#                    (internal/domain): no other source names its variable,
#                    option or bit (the generated files, tests and docs may;
#                    code names a row by its Go ID; the output domains'
#                    rows in internal/output/model may name a CSV file
#                    kernel_trace.csv, rocprofv3's file name, not the option);
#   check-machine-paths no file git tracks (text or binary) names a path of
#                    a development machine: under /work or /root, a user's
#                    /home, the checkout's own path, $HOME, a random temporary
#                    directory (test/machinepaths; fictional example users
#                    are allowed there by name, with the reason).
# Packages that must stay pure Go: the spool model, packets, counters,
# options, launching, names, placeholders, topology (the cgo ones are the
# shim, the OTF2 and ROCpd writers, thread-trace decoding and SQLite readers).
PURE_PACKAGES := ./internal/tracing/... ./internal/aql/... ./internal/counters ./internal/options ./internal/launch/... \
                 ./internal/placeholder ./internal/topology ./internal/hipapi ./internal/hsaapi ./internal/kernelname ./internal/textdist \
                 ./internal/atomicfile ./internal/output/ranges ./internal/output/model ./internal/output/csv ./internal/output/json ./internal/output/perfetto ./internal/output/parquet ./internal/output/summarytables ./internal/output/outputtest \
                 ./internal/hsa/request ./internal/toolenv ./internal/domain ./configs/gpu ./internal/duckdb ./internal/analysis/imbalance

# go generate ./vgpu runs vgpu/src/gen_perfregs.py, which reads YAML.
APT_PACKAGES += python3-yaml

.PHONY: guards check-generated check-nocgo check-layering check-domains check-machine-paths
guards: check-generated check-nocgo check-layering check-domains check-machine-paths

check-generated: rocm-roots
	$(GO) generate ./...
	@changed=$$(git status --porcelain --untracked-files=all); \
	if [ -n "$$changed" ]; then \
	  echo "check-generated: go generate changed the tree (commit what it generates, never edit generated files):"; \
	  echo "$$changed"; git --no-pager diff --stat; exit 1; \
	fi; echo "check-generated: go generate leaves the tree unchanged"

check-nocgo:
	@cgo=$$($(GO) list -deps -f '{{if and .CgoFiles (not .Standard)}}{{.ImportPath}}{{end}}' $(PURE_PACKAGES)); \
	if [ -n "$$cgo" ]; then echo "check-nocgo: these pure-Go packages now depend on cgo: $$cgo"; exit 1; fi
	CGO_ENABLED=0 $(GO) vet $$($(GO) list ./... | grep -v '/internal/hsa$$')
	CGO_ENABLED=0 $(GO) test -count=1 $(PURE_PACKAGES)

check-layering:
	$(GO) test -count=1 ./test/layering

check-domains:
	$(GO) test -count=1 -run 'TestNoSourceSpellsADomain|TestTableIsConsistent' ./internal/domain
	$(GO) test -count=1 -run TestGeneratedFilesAreCurrent ./internal/cmd/gendomain

check-machine-paths:
	$(GO) test -count=1 ./test/machinepaths
