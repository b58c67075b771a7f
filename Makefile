# ioprobe — see README.md. `make test` is the command CI runs.
SHELL := /bin/bash
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin/ioprobe
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS := -s -w -X github.com/ioprobe/ioprobe/internal/version.Version=$(VERSION)
export CGO_ENABLED ?= 0

.PHONY: all build run test test-deps unit bench bench-fio lint fmt clean dashboards

all: build

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/ioprobe

# The quick start: a 10-second 4 KiB random-read run on ./ioprobe.dat
# (1 GiB, created and filled on first use).
run: build
	./$(BIN) run --duration 10s --ramp 2s

# Everything CI runs: installs what the tests need, then every test.
test: test-deps lint
	$(GO) test -count=1 -timeout 20m ./...

test-deps:
	./scripts/test-deps.sh

# Tests without installing anything (what is missing is skipped with a message).
unit:
	$(GO) test -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# ioprobe against fio, interleaved, on /dev/zram0 (or a loop device); needs
# root and fio. See docs/performance.md.
bench-fio:
	GO=$(GO) ./scripts/bench-fio.sh

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin ioprobe.dat

# grafana/ from internal/dashboards (a test fails when it is stale).
dashboards:
	$(GO) run ./internal/dashboards/cmd/gen -out grafana
