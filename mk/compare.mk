# make compare-outputs BASE=<commit> [HEAD=<commit>]: the outputs of the CLI
# built at BASE and at HEAD (committed trees), byte for byte, over one fixed
# corpus of inputs (scripts/compare-outputs.sh says which and what is
# normalised). Needs `make build testapps` (the injected libraries and the
# sample apps the live inputs are recorded with).
.PHONY: compare-outputs
compare-outputs:
	@test -n "$(BASE)" || { echo "usage: make compare-outputs BASE=<commit> [HEAD=<commit>]"; exit 2; }
	scripts/compare-outputs.sh $(BASE) $(or $(HEAD),HEAD)
