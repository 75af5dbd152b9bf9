# Developer entry points. Every target works on a machine with only Go
# installed (make docker also needs Docker). Run `make help` for a summary.

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c

GO ?= go
# Flags for every `go test` run by `make test`. -count=1 is always passed
# before them: Go's test result cache does not know that a test talks to a
# broker, so a cached "ok" could hide integration tests that never ran.
GOTESTFLAGS ?= -race -timeout 20m
# How long `make fuzz` runs each fuzz target.
FUZZTIME ?= 10s
# Extra flags for the embedded cluster, e.g. CLUSTER_FLAGS='-slow-produce 5ms'.
CLUSTER_FLAGS ?=
# docker compose v2 plugin, or the standalone docker-compose v1.
DOCKER_COMPOSE ?= $(shell docker compose version >/dev/null 2>&1 && echo 'docker compose' || echo docker-compose)

KAFKA_BROKERS ?= 127.0.0.1:9092,127.0.0.1:9093,127.0.0.1:9094
KAFKA_SASL_BROKERS ?= 127.0.0.1:9096
export KAFKA_BROKERS KAFKA_SASL_BROKERS

CACHE_DIR := $(CURDIR)/.cache
CLUSTER_BIN := $(CACHE_DIR)/bin/cluster

# The one place the staticcheck version is pinned (CI installs it through
# `make staticcheck`). 2026.2.2 is the first release line that analyses Go
# 1.26 code; bump it together with the Go version CI uses.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := $(CACHE_DIR)/tools/staticcheck@$(STATICCHECK_VERSION)/staticcheck

# Shell snippets shared by the recipes below.
#
# modules: the root module first, then every nested module (any directory
# with its own go.mod, testdata excluded since the go tool ignores it too).
# modroot DIR: the directory of the go.mod that owns DIR.
define SH_FUNCS
modules() { echo .; find . -name go.mod -not -path ./go.mod -not -path './.git/*' -not -path '*/testdata/*' -not -path './.cache/*' -exec dirname {} \; | sort; }; \
modroot() { local d="$$1"; while [ ! -f "$$d/go.mod" ]; do d="$$(dirname "$$d")"; done; echo "$$d"; }; \
relto() { local r="$${2#$$1}"; echo "./$${r#/}"; };
endef

# Every .PHONY target has a line here; `make help-check` (part of `make
# lint`, so of CI) fails when one is missing.
.PHONY: help
help:
	@echo 'make cluster       run the embedded Kafka cluster (kfake) in the foreground: brokers 127.0.0.1:9092-9094, SASL 127.0.0.1:9096'
	@echo 'make cluster-bin   build the embedded cluster binary into .cache/bin/cluster'
	@echo 'make docker        start a real Apache Kafka cluster with docker compose on the same ports'
	@echo 'make docker-down   stop that cluster and remove its containers and volumes'
	@echo 'make test          go test -count=1 $(GOTESTFLAGS) ./... in the root module and every nested module;'
	@echo '                   without a cluster the integration tests skip (and pass), unless KAFKA_REQUIRE_BROKERS=1 makes them fail'
	@echo 'make example       start the embedded cluster in the background, run the examples against it, stop it'
	@echo 'make lint          tidy-check, fmt-check, vet, staticcheck, help-check and docs-check: what CI checks before the tests'
	@echo 'make tidy-check    go mod tidy -diff in every module'
	@echo 'make fmt-check     gofmt -l over the repository'
	@echo 'make vet           go vet ./... in every module'
	@echo 'make staticcheck   staticcheck ./... in every module (honnef.co/go/tools $(STATICCHECK_VERSION), installed into .cache)'
	@echo 'make help-check    check that this help names every .PHONY target of the Makefile'
	@echo 'make docs-check    check that the benchmark figures quoted in README.md and docs/ are those of docs/bench/results.json'
	@echo 'make fuzz          run every Fuzz target for FUZZTIME=$(FUZZTIME) each (several minutes at the default)'
	@echo 'make bench         the benchmark tool (bench/), full run, writes docs/bench/'
	@echo 'make bench-quick   the same, shorter (about 10 minutes)'
	@echo 'make modules       list the modules test, vet and lint iterate over'
	@echo 'make help          this list'

.PHONY: modules
modules:
	@$(SH_FUNCS) modules

.PHONY: cluster
cluster:
	cd itest && $(GO) run ./cmd/cluster $(CLUSTER_FLAGS)

.PHONY: cluster-bin
cluster-bin:
	@mkdir -p $(dir $(CLUSTER_BIN))
	cd itest && $(GO) build -o $(CLUSTER_BIN) ./cmd/cluster

.PHONY: docker
docker:
	$(DOCKER_COMPOSE) -f docker-compose.yml up -d

.PHONY: docker-down
docker-down:
	$(DOCKER_COMPOSE) -f docker-compose.yml down -v

# Runs every module even when one fails, then reports all failures, so a
# broken module never hides the results of the others.
.PHONY: test
test:
	@$(SH_FUNCS) failed=""; \
	for m in $$(modules); do \
		echo "==> $$m: $(GO) test -count=1 $(GOTESTFLAGS) ./..."; \
		(cd "$$m" && $(GO) test -count=1 $(GOTESTFLAGS) ./...) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "make test: FAILED in:$$failed"; exit 1; fi

.PHONY: vet
vet:
	@$(SH_FUNCS) failed=""; \
	for m in $$(modules); do \
		echo "==> $$m: $(GO) vet ./..."; \
		(cd "$$m" && $(GO) vet ./...) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "make vet: FAILED in:$$failed"; exit 1; fi

.PHONY: lint
lint: tidy-check fmt-check vet staticcheck help-check docs-check

# `go mod tidy -diff` prints what tidy would change and fails without
# touching go.mod or go.sum.
.PHONY: tidy-check
tidy-check:
	@$(SH_FUNCS) failed=""; \
	for m in $$(modules); do \
		echo "==> $$m: $(GO) mod tidy -diff"; \
		(cd "$$m" && $(GO) mod tidy -diff) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "make tidy-check: not tidy:$$failed"; exit 1; fi

# gofmt needs no module; .git and .cache hold no source of ours.
.PHONY: fmt-check
fmt-check:
	@echo "==> gofmt -l"; \
	unformatted=$$(find . \( -path ./.git -o -path ./.cache \) -prune -o -name '*.go' -print | xargs gofmt -l); \
	if [ -n "$$unformatted" ]; then echo "make fmt-check: files need gofmt:"; echo "$$unformatted"; exit 1; fi

$(STATICCHECK):
	@mkdir -p $(dir $@)
	GOBIN=$(dir $@) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)

.PHONY: staticcheck
staticcheck: $(STATICCHECK)
	@$(SH_FUNCS) failed=""; \
	for m in $$(modules); do \
		echo "==> $$m: staticcheck ./..."; \
		(cd "$$m" && $(STATICCHECK) ./...) || failed="$$failed $$m"; \
	done; \
	if [ -n "$$failed" ]; then echo "make staticcheck: findings in:$$failed"; exit 1; fi

.PHONY: help-check
help-check:
	@missing=""; help=$$($(MAKE) --no-print-directory -s -f $(firstword $(MAKEFILE_LIST)) help); \
	for t in $$(sed -n 's/^\.PHONY: *//p' $(firstword $(MAKEFILE_LIST))); do \
		grep -q "^make $$t " <<<"$$help" || missing="$$missing $$t"; \
	done; \
	if [ -n "$$missing" ]; then echo "make help-check: make help does not list:$$missing"; exit 1; fi; \
	echo "make help lists every .PHONY target"

# The figures README.md and docs/ quote from the benchmark run sit in
# <!-- bench:NAME --> blocks rendered from docs/bench/results.json
# (bench/internal/report/docs.go); `cd bench && go run ./cmd/docfigs -write`
# rewrites them, and the bench tool does after each run.
.PHONY: docs-check
docs-check:
	@echo "==> bench: $(GO) run ./cmd/docfigs"; \
	cd bench && $(GO) run ./cmd/docfigs

# Fuzz targets are found by grepping test files, so new ones are picked up
# without touching this file. `go test -fuzz` takes one package and one
# target at a time, hence the nested loop.
.PHONY: fuzz
fuzz:
	@$(SH_FUNCS) failed=""; count=0; \
	files=$$(grep -rlE --include='*_test.go' --exclude-dir=testdata --exclude-dir=.git --exclude-dir=.cache '^func Fuzz[A-Za-z0-9_]*\(' . | sort); \
	for f in $$files; do \
		dir=$$(dirname "$$f"); mod=$$(modroot "$$dir"); pkg=$$(relto "$$mod" "$$dir"); \
		for name in $$(grep -oE '^func Fuzz[A-Za-z0-9_]*\(' "$$f" | sed -e 's/^func //' -e 's/($$//'); do \
			count=$$((count+1)); \
			echo "==> $$mod: $(GO) test -run='^$$' -fuzz='^$$name\$$' -fuzztime=$(FUZZTIME) $$pkg"; \
			(cd "$$mod" && $(GO) test -run='^$$' -fuzz="^$$name\$$" -fuzztime=$(FUZZTIME) "$$pkg") || failed="$$failed $$pkg:$$name"; \
		done; \
	done; \
	if [ "$$count" = 0 ]; then echo "make fuzz: no Fuzz targets found"; exit 1; fi; \
	if [ -n "$$failed" ]; then echo "make fuzz: FAILED:$$failed"; exit 1; fi; \
	echo "make fuzz: $$count targets ran clean"

# Starts the embedded cluster unless something already listens on the first
# address of KAFKA_BROKERS (a `make cluster` or `make docker` you started
# yourself is reused and left running; CLUSTER_FLAGS reach the one started
# here), runs every example program against it, and stops the cluster it
# started. The four programs of examples/README.md run in its order, then
# any other directory under examples/ with a main package; the first one to
# exit non-zero fails the target.
.PHONY: example
example: cluster-bin
	@$(SH_FUNCS) \
	first=$${KAFKA_BROKERS%%,*}; \
	if (exec 3<>"/dev/tcp/$${first%:*}/$${first##*:}") 2>/dev/null; then \
		echo "==> reusing the cluster already listening on $$first"; \
	else \
		log=$(CACHE_DIR)/cluster.log; \
		$(CLUSTER_BIN) $(CLUSTER_FLAGS) >"$$log" 2>&1 & pid=$$!; \
		trap 'kill $$pid 2>/dev/null; wait $$pid 2>/dev/null || true' EXIT; \
		for i in $$(seq 1 120); do grep -qx ready "$$log" && break; kill -0 $$pid 2>/dev/null || break; sleep 0.5; done; \
		if ! grep -qx ready "$$log"; then echo "embedded cluster did not start:"; cat "$$log"; exit 1; fi; \
		echo "==> embedded cluster started (pid $$pid)"; sed -e 's/^/    /' "$$log"; \
	fi; \
	found=$$( (grep -rlE --include='*.go' --exclude='*_test.go' '^package main$$' examples 2>/dev/null || true) | xargs -r -n1 dirname | sort -u); \
	dirs="examples/producer examples/producer-async examples/consumer examples/consumergroup"; \
	for d in $$found; do case " $$dirs " in *" $$d "*) ;; *) dirs="$$dirs $$d";; esac; done; \
	for d in $$dirs; do \
		mod=$$(modroot "$$d"); pkg=$$(relto "$$mod" "$$d"); \
		echo "==> $$mod: $(GO) run $$pkg"; \
		(cd "$$mod" && $(GO) run "$$pkg") || { echo "make example: $$d FAILED"; exit 1; }; \
	done; \
	echo "make example: all examples ran"

# Benchmark tool (bench/, its own module): builds one load generator per
# client and the embedded cluster, runs every client in its own process and
# writes docs/bench/results.md, results.json, heap.svg and consume-heap.svg.
# `make bench-quick` (or BENCHFLAGS=-quick) takes about 10 minutes on 2 cores
# (BENCHFLAGS='-scenarios consume' for the consumers alone); `make bench` is
# the full run.
BENCHFLAGS ?=
.PHONY: bench bench-quick
bench:
	cd bench && GO=$(GO) $(GO) run ./cmd/bench $(BENCHFLAGS)

bench-quick:
	cd bench && GO=$(GO) $(GO) run ./cmd/bench -quick $(BENCHFLAGS)
