# Run files (core/config, docs/run-files.md). `make test` also validates the shipped run
# files with the built binary, as a user would; `make fuzz-config` fuzzes the run-file
# parser for a minute (go test runs only its seed corpus).

TEST_EXTRA += validate-runs

.PHONY: validate-runs fuzz-config

validate-runs: build
	@for f in bench.hcl $(filter-out %.lock.hcl,$(wildcard examples/runs/*.hcl)); do \
		$(BIN)/duplexmpe validate $$f || exit 1; \
	done

fuzz-config:
	$(GO) test ./core/config -run '^$$' -fuzz FuzzParse -fuzztime 60s
