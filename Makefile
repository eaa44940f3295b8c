# duplexmpe: `make run` runs the embedded default benchmark (bench.hcl), `make test` runs
# every test. Both install what they need first (Debian packages, pinned downloads, the
# Python environment). Each area of the tree adds its pieces in mk/*.mk by appending to
# the variables below, so this file stays small.

GO      ?= go
PYTHON  ?= python3
BIN     := bin
CACHE   := .cache
VENV    := .venv
export GOFLAGS ?= -buildvcs=true
# Plugins are built reproducibly: no checkout path and no VCS stamp in the binary, so its
# sha256 (what pins and locks it, docs/run-files.md) changes with its code and nothing
# else. The harness keeps its VCS stamp for `duplexmpe version`. sdk/plugintest's
# ReproducibleBuild uses the same flags; a test checks that they agree.
PLUGIN_BUILD_FLAGS := -trimpath -buildvcs=false

# Areas append: DEPS (targets that install or fetch), PYTEST_PATHS (pytest roots),
# TEST_EXTRA (more test targets), BENCH_EXTRA (more benchmark targets).
DEPS         := deps-apt
PYTEST_PATHS :=
TEST_EXTRA   :=
BENCH_EXTRA  :=

# Every directory with a main package under plugins/ or examples/ is a Go plugin.
GO_PLUGIN_DIRS := $(patsubst %/main.go,%,$(wildcard plugins/*/main.go examples/*/main.go))

-include mk/*.mk

.PHONY: all build test run bench deps deps-apt proto vet fmt-check go-test py-test clean help

all: build

help:
	@echo "make run    run the embedded default benchmark (bench.hcl) and print the tables"
	@echo "make test   install what is needed, build, vet, and run every test"
	@echo "make build  build bin/duplexmpe, bin/serve-standin and every Go plugin into bin/plugins/"
	@echo "make bench  run the benchmarks (make run's phases, VAD, plugin round trip, harness real-time factor)"
	@echo "make proto  regenerate the Go and Python code of sdk/proto"

deps: $(DEPS)

deps-apt:
	@scripts/install-apt.sh

build:
	$(GO) build -o $(BIN)/duplexmpe ./core/cmd/duplexmpe
	$(GO) build -o $(BIN)/serve-standin ./plugins/standin/cmd/serve-standin
	@mkdir -p $(BIN)/plugins
	@for d in $(GO_PLUGIN_DIRS); do \
		echo "$(GO) build $(PLUGIN_BUILD_FLAGS) -o $(BIN)/plugins/$$(basename $$d) ./$$d"; \
		$(GO) build $(PLUGIN_BUILD_FLAGS) -o $(BIN)/plugins/$$(basename $$d) ./$$d || exit 1; \
	done

run: deps build
	$(BIN)/duplexmpe run bench.hcl

test: deps build vet fmt-check go-test py-test $(TEST_EXTRA)

vet:
	$(GO) vet ./...

fmt-check:
	@out=$$(gofmt -l core sdk plugins examples internal tests 2>/dev/null); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

go-test:
	$(GO) test -count=1 -timeout 60m ./...

py-test:
	@if [ -n "$(strip $(PYTEST_PATHS))" ]; then \
		$(VENV)/bin/python -m pytest -q $(PYTEST_PATHS); \
	fi

bench: deps build bench-run $(BENCH_EXTRA)
	$(GO) test -run '^$$' -bench . -benchtime 3x ./...

# make run's phases, on a run directory of its own (the dataset is reused once built):
# how long playing took, what the scoring beside it had left when playing ended, and the
# CPU of the whole (duplexmpe and the plugins it started).
.PHONY: bench-run
bench-run: deps build
	rm -rf build/bench-run
	@bash -c 'TIMEFORMAT="bench-run: %R s wall, %U s user + %S s system CPU (duplexmpe and its plugins)"; \
		time $(BIN)/duplexmpe run bench.hcl --var out=build/bench-run > build/bench-run.log 2>&1' || { tail -20 build/bench-run.log; exit 1; }
	@grep -E "^(dataset open_v2_dev|evaluation default: played|scored|scorer calls)" build/bench-run.log

# Regenerating needs protoc (Debian protobuf-compiler) and the two pinned Go generators.
PROTOC_GEN_GO      := google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
PROTOC_GEN_GO_GRPC := google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2
proto:
	GOBIN=$(CURDIR)/$(CACHE)/gobin $(GO) install $(PROTOC_GEN_GO)
	GOBIN=$(CURDIR)/$(CACHE)/gobin $(GO) install $(PROTOC_GEN_GO_GRPC)
	PATH=$(CURDIR)/$(CACHE)/gobin:$$PATH protoc -I sdk/proto \
		--go_out=. --go_opt=module=github.com/duplexmpe/duplexmpe \
		--go-grpc_out=. --go-grpc_opt=module=github.com/duplexmpe/duplexmpe \
		sdk/proto/duplexmpe/v1/*.proto
	$(MAKE) proto-python

clean:
	rm -rf $(BIN)
