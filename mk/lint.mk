# make lint's static analysis besides gofmt and go vet (issue 35):
# staticcheck, pinned, run with `go run` from the module cache; make deps
# fetches and builds it once, so that CI's lint needs no download. Findings
# are fixed, or kept with a narrow //lint:ignore CHECK reason.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: staticcheck staticcheck-deps
lint: staticcheck
deps: staticcheck-deps

staticcheck:
	$(GO) run $(STATICCHECK) ./...

staticcheck-deps:
	$(GO) run $(STATICCHECK) -version
