# Run files (core/config, docs/run-files.md). `make test` also validates the shipped run
# files with the built binary, as a user would; `make fuzz-config` fuzzes the run-file
# parser for a minute (go test runs only its seed corpus).

TEST_EXTRA += validate-runs

.PHONY: validate-runs fuzz-config

# bench.hcl is validated whole, its plugins started to check each config block against
# its schema (make deps installs them all); the example run files with --no-start, since
# they name model adapters whose Python environments make test does not install.
validate-runs: build
	$(BIN)/duplexmpe validate bench.hcl
	@for f in $(filter-out %.lock.hcl,$(wildcard examples/runs/*.hcl)); do \
		$(BIN)/duplexmpe validate --no-start $$f || exit 1; \
	done

fuzz-config:
	$(GO) test ./core/config -run '^$$' -fuzz FuzzParse -fuzztime 60s
