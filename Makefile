# The two commands a newcomer needs:
#   make run    build cidx and serve this repository at http://127.0.0.1:8383/mcp
#   make test   run every test (Go tests, then the MCP conformance suite)

GO ?= go
BIN := bin/cidx
DEMO_DATA ?= .cidx-demo

.PHONY: build run test test-go conformance bench bench-regex bench-search vet fmt

build:
	$(GO) build -o $(BIN) ./cmd/cidx

run: build
	./$(BIN) serve --data-dir $(DEMO_DATA) --repo cidx=.

test: test-go conformance

test-go:
	$(GO) test -count=1 ./...
	# The tests where searches race index builds, again under the race detector.
	$(GO) test -count=1 -race -run 'Searches|Refresh|Incremental|Catalog|Outdated|Embedder|Budget|Merge|Update|Vectors' ./internal/app ./internal/index ./internal/bm25 ./internal/trigram

conformance: build
	bash scripts/conformance.sh

bench: build
	$(GO) run ./bench/filecontent

bench-regex:
	$(GO) run ./bench/regex

bench-search:
	$(GO) run ./bench/search

vet:
	$(GO) vet ./...
	@test -z "$$(gofmt -l .)" || (gofmt -l . && exit 1)
