# ioprobe — see README.md. `make test` is the command CI runs.
SHELL := /bin/bash
GO ?= $(shell command -v go 2>/dev/null || echo /usr/local/go/bin/go)
BIN := bin/ioprobe
# The build's name in `ioprobe version` and ioprobe_build_info: from git,
# or given (make build VERSION=v1.2.3 REVISION=...).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
LDFLAGS := -s -w -X github.com/ioprobe/ioprobe/internal/version.Version=$(VERSION) \
	-X github.com/ioprobe/ioprobe/internal/version.revision=$(REVISION)
export CGO_ENABLED ?= 0
# The image `make image` builds, tagged with VERSION.
IMAGE ?= ghcr.io/ioprobe/ioprobe
# Where version-file writes VERSION and REVISION for the Dockerfile: its
# build context has no .git to ask.
VERSION_FILE ?= .version

.PHONY: all build version-file image run install uninstall test test-deps unit race fuzz bench bench-fio bench-idle bench-devlat bench-fsync fio-side lint fmt clean dashboards bpf

all: build

build: version-file
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/ioprobe

# make install puts the binary on the PATH: $(DESTDIR)$(PREFIX)/bin/ioprobe
# (a package build sets DESTDIR, its staging root). Beside it, in
# $(PREFIX)/share/ioprobe, what running it as a service starts from: the
# systemd unit (its ExecStart naming the installed binary) and the
# commented example config. Both are examples to copy: nothing goes to
# /etc, where a config or unit of the host's own would be overwritten,
# and nothing is started. make uninstall removes exactly those files.
# The binary is built first only when bin/ioprobe is missing: `make build`
# (or make run) as yourself, then `sudo make install`.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SHAREDIR ?= $(PREFIX)/share/ioprobe
INSTALL ?= install

$(BIN):
	@$(MAKE) --no-print-directory build

install: $(BIN)
	$(INSTALL) -d -m 0755 '$(DESTDIR)$(BINDIR)' '$(DESTDIR)$(SHAREDIR)'
	$(INSTALL) -m 0755 $(BIN) '$(DESTDIR)$(BINDIR)/ioprobe'
	$(INSTALL) -m 0644 configs/ioprobe.yaml '$(DESTDIR)$(SHAREDIR)/ioprobe.yaml'
	sed 's|^ExecStart=/usr/local/bin/ioprobe |ExecStart=$(BINDIR)/ioprobe |' configs/systemd/ioprobe.service >'$(DESTDIR)$(SHAREDIR)/ioprobe.service'
	chmod 0644 '$(DESTDIR)$(SHAREDIR)/ioprobe.service'

uninstall:
	rm -f '$(DESTDIR)$(BINDIR)/ioprobe' '$(DESTDIR)$(SHAREDIR)/ioprobe.yaml' '$(DESTDIR)$(SHAREDIR)/ioprobe.service'
	if [ -d '$(DESTDIR)$(SHAREDIR)' ]; then rmdir --ignore-fail-on-non-empty '$(DESTDIR)$(SHAREDIR)'; fi

# VERSION and REVISION as the Dockerfile reads them when no build argument
# sets them: a `docker build .` after make build or make image names the
# build as they do (git-ignored; in the Docker context on purpose).
version-file:
	@printf 'VERSION=%s\nREVISION=%s\n' '$(VERSION)' '$(REVISION)' >$(VERSION_FILE)

# The container image (needs Docker): VERSION and REVISION passed as build
# arguments, the image tagged with VERSION.
image: version-file
	docker build --build-arg VERSION=$(VERSION) --build-arg REVISION=$(REVISION) -t $(IMAGE):$(VERSION) .

# The quick start: a 10-second 4 KiB random-read run on ./ioprobe.dat
# (1 GiB, created and filled on first use).
run: build
	./$(BIN) run --duration 10s --ramp 2s

# Everything CI runs: installs what the tests need, lints, then every test
# (fuzz seeds included) with the race detector beside them, and Prometheus
# 3 built beside the rest (scripts/test.sh says how it overlaps). Logs go
# to .tools/logs. Fuzzing itself is make fuzz.
test:
	@GO=$(GO) ./scripts/test.sh

# The packages where goroutines share state (workers and their counters,
# the runner's snapshots, the daemon's scheduler and HTTP handlers, the
# CLI's signal handling) under the race detector, which needs cgo and a C
# compiler (about 4 minutes on 2 loaded cores from a cold cache).
RACE_PKGS := ./internal/engine/... ./internal/runner/... ./internal/exporter/... ./internal/cli/... ./internal/fleet/...
race:
	@if ! command -v "$${CC:-gcc}" >/dev/null 2>&1; then \
		echo "race: no C compiler ($${CC:-gcc}): the race detector needs cgo; skipped (make test-deps installs gcc)"; \
	else \
		CGO_ENABLED=1 $(GO) test -race -count=1 -timeout 20m $(RACE_PKGS); \
	fi

# Every fuzz target (func FuzzX(f *testing.F) in a _test.go file) for
# FUZZTIME each; -fuzz takes one target of one package at a time. Their
# seeds, and any input that ever failed, are in testdata/fuzz/FuzzX and
# run with the plain tests (make test) too. A new failure is written
# there: commit it with the fix. Longer: make fuzz FUZZTIME=200000x (or
# FUZZTIME=10m). Not part of make test: from a cold cache its
# instrumented builds cost about 4 CPU-minutes, which took make test past
# 15 minutes on 2 cores.
# The default is a count of inputs, not a duration: Go 1.26's fuzzing
# coordinator can report "context deadline exceeded" as a failure when a
# duration ends while a worker is busy (golang/go#75804, fixed in 1.27),
# which a loaded machine hits; a count has no deadline to race, and a
# slow machine only takes longer.
FUZZTIME ?= 5000x
fuzz:
	@set -euo pipefail; \
	grep -rE --include='*_test.go' '^func Fuzz[A-Za-z0-9_]+\(f \*testing\.F\)' cmd internal pkg test | \
	sed -E 's|^(.*)/[^/]*:func (Fuzz[A-Za-z0-9_]+).*|\1 \2|' | sort | \
	while read -r dir name; do \
		echo "fuzz: $$name (./$$dir) for $(FUZZTIME)"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) ./$$dir 2>&1) || { echo "$$out"; exit 1; }; \
	done

test-deps:
	./scripts/test-deps.sh

# Tests without installing anything (what is missing is skipped with a message;
# -parallel 4 as in scripts/test.sh: ./test's tests that wait run beside each other).
unit:
	$(GO) test -count=1 -parallel 4 ./...
	cd test/upstream && $(GO) test -count=1 ./...

bench:
	$(GO) test -run '^$$' -bench . -benchmem ./...

# ioprobe against fio, fio's t/io_uring and a bare C pread loop,
# interleaved, on /dev/zram0 (or a loop device); needs root, and installs
# what it needs with scripts/test-deps.sh --bench. ROUNDS=5 DURATION=10 by
# default. See docs/performance.md.
bench-fio:
	GO=$(GO) ./scripts/bench-fio.sh

# The idle daemon (the shipped canary) over 60 s: CPU per canary I/O and
# per scrape, system calls, beside a C loop doing the same reads; BASE=rev
# adds that revision's daemon, interleaved. See docs/performance.md.
bench-idle:
	GO=$(GO) ./scripts/bench-idle.sh

# fio and ioprobe on the same job files (scripts/fioside/*.fio) on a loop
# device: read share, mean size from each tool's JSON and the kernel's
# diskstats, size mix and random share from strace; needs root, fio, strace.
fio-side:
	GO=$(GO) ./scripts/fio-side.sh

# What the device-latency BPF programs cost: CPU per I/O with and without
# them at QD 32 on a loop device over /dev/shm, and their kernel time per
# request (bpftool); BASE=rev adds that revision, interleaved. See
# docs/performance.md#device-latency.
bench-devlat:
	GO=$(GO) ./scripts/bench-devlat.sh

# ioprobe's and fio's fdatasync latency, side by side (needs fio).
bench-fsync:
	GO=$(GO) ./scripts/bench-fsync.sh

# staticcheck is pinned (scripts/test-deps.sh installs this version from
# the Go module proxy); without it lint says so and checks the rest.
STATICCHECK_VERSION := v0.8.2
STATICCHECK ?= $(shell $(GO) env GOPATH)/bin/staticcheck
lint:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	cd test/upstream && $(GO) vet ./...
	@if [ -x "$(STATICCHECK)" ]; then \
		echo "$(STATICCHECK) ./..."; $(STATICCHECK) ./...; \
		echo "cd test/upstream && $(STATICCHECK) ./..."; (cd test/upstream && $(STATICCHECK) ./...); \
	else \
		echo "lint: staticcheck is not installed (make test-deps installs $(STATICCHECK_VERSION)): skipped"; \
	fi

fmt:
	gofmt -w $$(git ls-files '*.go')

clean:
	rm -rf bin ioprobe.dat $(VERSION_FILE)

# The device-latency BPF objects (internal/devlat/devlat_bpfel.{o,go})
# from internal/devlat/bpf/ with Debian's clang 14 through bpf2go; they
# are committed (a build needs no C compiler) and a test fails when they
# are stale (internal/devlat/objects_test.go).
bpf:
	cd internal/devlat && $(GO) generate ./...

# grafana/, configs/prometheus/{rules,alerts}.yml and mixin/ from
# internal/dashboards (a test fails when any is stale).
dashboards:
	$(GO) run ./internal/dashboards/cmd/gen -out grafana
